"""The screen tool: a PNG screenshot of one screen through the screen bridge, saved to the outputs folder."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.bridges.protocols import ScreenBridge
from weclaw_desktop.toolkit import BaseTool, ToolContext, ToolError, ToolResult, action
from weclaw_desktop.tools.pathguard import resolve_user_path

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class ScreenshotParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    screen: int | None = Field(
        default=None, ge=0, le=15, description="Which screen (0, 1, ...); leave empty for the main screen"
    )
    path: str | None = Field(
        default=None,
        max_length=4000,
        description="Where to save the PNG, only when the user names a place; default: the outputs folder",
    )


def _free_name(folder: Path, stem: str, suffix: str) -> Path:
    candidate = folder / f"{stem}{suffix}"
    n = 2
    while candidate.exists():
        candidate = folder / f"{stem}-{n}{suffix}"
        n += 1
    return candidate


def _save(target: Path, png: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("xb") as fh:  # never overwrite a file that appeared meanwhile
        fh.write(png)


def _png_size(png: bytes) -> tuple[int, int] | None:
    if len(png) >= 24 and png[12:16] == b"IHDR":
        return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    return None


class ScreenTool(BaseTool):
    @action(
        "Take a screenshot of the main screen or of screen number N and save it as a PNG file. Use it when "
        "the user asks to capture the screen; the file path is returned and the screens are listed in data."
    )
    async def screenshot(self, params: ScreenshotParams, ctx: ToolContext) -> ToolResult:
        bridge: ScreenBridge = self.bridge("screen")
        screens = await bridge.screens()
        if not screens:
            raise ToolError("No screen is available to capture (the computer may be locked or have no display).")
        indexes = [int(s.get("index", i)) for i, s in enumerate(screens)]
        if params.screen is not None and params.screen not in indexes:
            listing = ", ".join(_describe(s) for s in screens)
            raise ToolError(f"There is no screen {params.screen}. Screens: {listing}. Call again with one of them.")
        target = self._target(params.path, ctx)
        png = await bridge.screenshot(params.screen)
        if not png.startswith(PNG_SIGNATURE):
            raise ToolError("The screen service returned no PNG image; the screenshot failed. Try again.")
        try:
            await asyncio.to_thread(_save, target, png)
        except FileExistsError:
            raise ToolError(f"{target} already exists; choose another file name.") from None
        except OSError as exc:
            raise ToolError(f"Could not save the screenshot to {target}: {exc.strerror or exc}.") from None
        size = _png_size(png)
        chosen = params.screen if params.screen is not None else _primary(screens)
        dims = f" ({size[0]}x{size[1]})" if size else ""
        return ToolResult.ok(
            f"Screenshot of screen {chosen}{dims} saved to {target}.",
            data={
                "screen": chosen,
                "width": size[0] if size else None,
                "height": size[1] if size else None,
                "bytes": len(png),
                "screens": screens,
            },
            files=[target],
        )

    @staticmethod
    def _target(raw: str | None, ctx: ToolContext) -> Path:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        if not raw:
            folder = Path(ctx.outputs_dir)
            return _free_name(folder, f"screenshot-{stamp}", ".png")
        path = resolve_user_path(raw, ctx, for_write=True)
        if path.is_dir():
            return _free_name(path, f"screenshot-{stamp}", ".png")
        if path.suffix.lower() != ".png":
            path = path.with_name(path.name + ".png")
        if path.exists():
            raise ToolError(f"{path} already exists; choose another file name or a folder.")
        return path


def _primary(screens: list[dict[str, Any]]) -> int:
    for i, s in enumerate(screens):
        if s.get("primary"):
            return int(s.get("index", i))
    return int(screens[0].get("index", 0))


def _describe(s: dict[str, Any]) -> str:
    primary = ", main" if s.get("primary") else ""
    return f"{s.get('index')} ({s.get('name', '?')}, {s.get('width')}x{s.get('height')}{primary})"
