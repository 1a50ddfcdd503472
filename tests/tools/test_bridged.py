"""The bridged tools (clipboard, notify, screen, open) together: the test bridges meet the protocols, and
without a bridge each tool is hidden and says what is missing. Each tool: tests/tools/<tool>/."""

from __future__ import annotations

import pytest
from toolrun import Run
from tools.fake_bridges import FakeScreens, MemoryClipboard, RecordingDesktop, RecordingNotifier

from weclaw_desktop.bridges.protocols import ClipboardBridge, DesktopBridge, NotifierBridge, ScreenBridge
from weclaw_desktop.toolkit import AvailabilityContext, Policy, ToolStatus, plan


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
