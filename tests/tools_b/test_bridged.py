"""clipboard, notify, screen and open through the Dispatcher, with in-memory bridges injected."""

from __future__ import annotations

from pathlib import Path

import pytest
from toolrun import Run
from tools_b.bridges import FakeScreens, MemoryClipboard, RecordingDesktop, RecordingNotifier, make_png

from weclaw_desktop.bridges.protocols import ClipboardBridge, DesktopBridge, NotifierBridge, ScreenBridge
from weclaw_desktop.toolkit import AvailabilityContext, Policy, ToolContext, ToolStatus, plan


def test_test_bridges_implement_the_protocols() -> None:
    assert isinstance(MemoryClipboard(), ClipboardBridge)
    assert isinstance(RecordingNotifier(), NotifierBridge)
    assert isinstance(FakeScreens(), ScreenBridge)
    assert isinstance(RecordingDesktop(), DesktopBridge)


# --- without bridges -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("function", "arguments", "bridge"),
    [
        ("clipboard_read", {}, "clipboard"),
        ("clipboard_write", {"text": "x"}, "clipboard"),
        ("notify_send", {"message": "hi"}, "notifier"),
        ("screen_screenshot", {}, "screen"),
        ("open_path", {"path": "~"}, "desktop"),
        ("open_url", {"url": "https://example.com"}, "desktop"),
    ],
)
async def test_without_bridge_the_call_says_what_is_missing(
    run: Run, function: str, arguments: dict[str, object], bridge: str
) -> None:
    res = await run(function, **arguments)
    assert res.status is ToolStatus.ERROR
    assert f"{function} is not available right now: [bridge-missing] needs the {bridge} service" in res.output


async def test_bridged_tools_are_hidden_until_injected(run: Run) -> None:
    tools = ["clipboard", "notify", "screen", "open"]
    hidden = plan(run.registry, Policy(), AvailabilityContext(), tools=tools)
    assert sorted(hidden.hidden) == sorted(tools)
    assert {d.code.value for ds in hidden.hidden.values() for d in ds} == {"bridge-missing"}
    run.registry.inject(
        {
            "clipboard": MemoryClipboard(),
            "notifier": RecordingNotifier(),
            "screen": FakeScreens(),
            "desktop": RecordingDesktop(),
        }
    )
    shown = plan(run.registry, Policy(), AvailabilityContext(), tools=tools)
    assert sorted(shown.visible) == sorted(tools) and shown.hidden == {}


# --- clipboard -----------------------------------------------------------------------------------------
async def test_clipboard_write_then_read(run: Run) -> None:
    board = MemoryClipboard("before")
    run.registry.inject({"clipboard": board})
    res = await run("clipboard_write", text="复制的文字\nsecond line")
    assert res.succeeded, res.output
    assert board.writes == ["复制的文字\nsecond line"]
    assert res.data == {"chars": 17}
    res = await run("clipboard_read")
    assert res.succeeded
    assert res.output == "Clipboard text (17 characters):\n复制的文字\nsecond line"
    assert res.data == {"chars": 17, "lines": 2, "truncated": False}


async def test_clipboard_read_empty_and_long(ctx: ToolContext) -> None:
    run = Run(ctx, config={"clipboard": {"max_read_chars": 100}})
    board = MemoryClipboard("")
    run.registry.inject({"clipboard": board})
    res = await run("clipboard_read")
    assert res.succeeded and res.output.startswith("The clipboard is empty")
    board.text = "a" * 250
    res = await run("clipboard_read")
    assert res.truncated and res.data["truncated"] is True
    assert "[clipboard text cut at 100 of 250 characters]" in res.output
    assert "a" * 101 not in res.output


async def test_clipboard_write_bad_input_keeps_the_clipboard(run: Run) -> None:
    board = MemoryClipboard("keep me")
    run.registry.inject({"clipboard": board})
    res = await run("clipboard_write", text="")
    assert res.status is ToolStatus.ERROR and "text:" in res.output
    res = await run("clipboard_write")
    assert res.status is ToolStatus.ERROR and "text: Field required" in res.output
    res = await run("clipboard_read", text="x")
    assert res.status is ToolStatus.ERROR and "unknown argument 'text'" in res.output
    assert board.text == "keep me" and board.writes == []


# --- notify --------------------------------------------------------------------------------------------
async def test_notify_send(run: Run) -> None:
    notifier = RecordingNotifier()
    run.registry.inject({"notifier": notifier})
    res = await run("notify_send", title=" 下载完成 ", message="report.pdf is ready", urgent=True)
    assert res.succeeded, res.output
    assert notifier.sent == [("下载完成", "report.pdf is ready", True)]
    res = await run("notify_send", message="Default title")
    assert notifier.sent[-1] == ("WeClaw", "Default title", False)


async def test_notify_bad_input_sends_nothing(run: Run) -> None:
    notifier = RecordingNotifier()
    run.registry.inject({"notifier": notifier})
    for args, message in [
        ({"message": "   "}, "message: Value error, must not be blank"),
        ({"title": "x" * 101, "message": "hi"}, "title:"),
        ({"message": "x" * 1001}, "message:"),
        ({"title": "t"}, "message: Field required"),
    ]:
        res = await run("notify_send", **args)
        assert res.status is ToolStatus.ERROR, args
        assert message in res.output
    assert notifier.sent == []


# --- screen --------------------------------------------------------------------------------------------
async def test_screenshot_of_the_main_screen(run: Run, ctx: ToolContext) -> None:
    screens = FakeScreens()
    run.registry.inject({"screen": screens})
    res = await run("screen_screenshot")
    assert res.succeeded, res.output
    (saved,) = res.files
    path = Path(saved)
    assert path.parent == ctx.outputs_dir and path.name.startswith("screenshot-") and path.suffix == ".png"
    assert path.read_bytes() == make_png(64, 48)  # noqa: ASYNC240 - a tiny local file in a test
    assert res.data["screen"] == 0 and (res.data["width"], res.data["height"]) == (64, 48)
    assert [s["index"] for s in res.data["screens"]] == [0, 1]
    assert screens.captured == [None]
    again = await run("screen_screenshot")  # same second: a new name, the first file is kept
    assert again.files[0] != saved and path.exists()  # noqa: ASYNC240 - a tiny local file in a test


async def test_screenshot_of_a_given_screen_to_a_named_folder(run: Run, home: Path) -> None:
    run.registry.inject({"screen": FakeScreens()})
    (home / "Pictures").mkdir()
    res = await run("screen_screenshot", screen=1, path="~/Pictures")
    assert res.succeeded, res.output
    path = Path(res.files[0])
    assert path.parent == (home / "Pictures").resolve()
    assert (res.data["width"], res.data["height"]) == (32, 16)
    res = await run("screen_screenshot", screen=1, path="~/Pictures/desk")
    assert Path(res.files[0]) == (home / "Pictures" / "desk.png").resolve()


async def test_screenshot_bad_inputs(run: Run, ctx: ToolContext, home: Path) -> None:
    screens = FakeScreens()
    run.registry.inject({"screen": screens})
    res = await run("screen_screenshot", screen=5)
    assert res.status is ToolStatus.ERROR
    assert "There is no screen 5. Screens: 0 (Built-in, 64x48, main), 1 (HDMI-1, 32x16)" in res.output
    res = await run("screen_screenshot", screen=-1)
    assert res.status is ToolStatus.ERROR and "screen:" in res.output
    res = await run("screen_screenshot", path="/etc/shot.png")
    assert res.status is ToolStatus.ERROR and "outside the folders WeClaw may use" in res.output
    (home / "taken.png").write_bytes(b"old")
    res = await run("screen_screenshot", path="~/taken.png")
    assert res.status is ToolStatus.ERROR and "already exists" in res.output
    assert (home / "taken.png").read_bytes() == b"old"
    assert screens.captured == []  # nothing was captured for a call that could not be saved
    assert list(ctx.outputs_dir.iterdir()) == []


async def test_screenshot_with_a_broken_screen_service(run: Run, ctx: ToolContext) -> None:
    run.registry.inject({"screen": FakeScreens(broken=True)})
    res = await run("screen_screenshot")
    assert res.status is ToolStatus.ERROR and "returned no PNG image" in res.output
    assert list(ctx.outputs_dir.iterdir()) == []


# --- open ----------------------------------------------------------------------------------------------
async def test_open_path_and_reveal(run: Run, home: Path) -> None:
    desktop = RecordingDesktop()
    run.registry.inject({"desktop": desktop})
    (home / "报告.pdf").write_bytes(b"%PDF")
    res = await run("open_path", path="~/报告.pdf")
    assert res.succeeded, res.output
    assert desktop.opened_paths == [(home / "报告.pdf").resolve()]
    assert res.data == {"path": str((home / "报告.pdf").resolve()), "kind": "file"}
    res = await run("open_path", path="~", reveal=False)
    assert res.data["kind"] == "folder"
    res = await run("open_path", path="~/报告.pdf", reveal=True)
    assert res.succeeded and desktop.revealed == [(home / "报告.pdf").resolve()]
    assert "in the file manager" in res.output


async def test_open_path_refusals(run: Run, home: Path) -> None:
    desktop = RecordingDesktop()
    run.registry.inject({"desktop": desktop})
    res = await run("open_path", path="~/missing.txt")
    assert res.status is ToolStatus.ERROR and "does not exist" in res.output
    res = await run("open_path", path="/etc/hosts")
    assert res.status is ToolStatus.ERROR and "outside the folders WeClaw may use" in res.output
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("key")
    res = await run("open_path", path="~/.ssh/id_rsa")
    assert res.status is ToolStatus.ERROR and "passwords, keys or browser data" in res.output
    (home / "install.sh").write_text("echo hi")
    res = await run("open_path", path="~/install.sh")
    assert res.status is ToolStatus.ERROR and "is a program or script; opening it would run it" in res.output
    assert desktop.opened_paths == []
    res = await run("open_path", path="~/install.sh", reveal=True)
    assert res.succeeded and desktop.revealed == [(home / "install.sh").resolve()]


async def test_open_url(run: Run) -> None:
    desktop = RecordingDesktop()
    run.registry.inject({"desktop": desktop})
    for url, opened in [
        ("https://example.com/a?b=1", "https://example.com/a?b=1"),
        ("example.com", "https://example.com"),
        ("mailto:someone@example.com?subject=Hi", "mailto:someone@example.com?subject=Hi"),
    ]:
        res = await run("open_url", url=url)
        assert res.succeeded, res.output
        assert desktop.opened_urls[-1] == opened


async def test_open_url_refusals(run: Run) -> None:
    desktop = RecordingDesktop()
    run.registry.inject({"desktop": desktop})
    for url, message in [
        ("file:///etc/passwd", "not 'file'"),
        ("javascript:alert(1)", "not 'javascript'"),
        ("ftp://example.com", "not 'ftp'"),
        ("mailto:", "has no e-mail address"),
        ("https://", "has no host name"),
    ]:
        res = await run("open_url", url=url)
        assert res.status is ToolStatus.ERROR, url
        assert message in res.output, res.output
    assert desktop.opened_urls == []


async def test_open_reports_when_the_system_cannot(run: Run, home: Path) -> None:
    run.registry.inject({"desktop": RecordingDesktop(succeed=False)})
    res = await run("open_url", url="https://example.com")
    assert res.status is ToolStatus.ERROR and "could not open https://example.com" in res.output
    (home / "a.txt").write_text("x")
    res = await run("open_path", path="~/a.txt")
    assert res.status is ToolStatus.ERROR and "could not open the file" in res.output
