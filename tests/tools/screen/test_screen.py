"""screen: screenshots through the Dispatcher, with fake screens injected."""

from __future__ import annotations

from pathlib import Path

from toolrun import Run
from tools.fake_bridges import FakeScreens, make_png

from weclaw_desktop.toolkit import ToolContext, ToolStatus


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
