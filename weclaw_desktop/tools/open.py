"""The open tool: open a file, folder or web address with the default application, through the desktop bridge."""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.bridges.protocols import DesktopBridge
from weclaw_desktop.toolkit import BaseTool, ToolContext, ToolError, ToolResult, action
from weclaw_desktop.toolkit.argkinds import PathStr
from weclaw_desktop.tools.pathguard import resolve_user_path

URL_SCHEMES = ("http", "https", "mailto")
#: Opening these with the default application would run a program; the shell tool (with approval) does that.
PROGRAM_SUFFIXES = frozenset(
    [
        ".exe",
        ".msi",
        ".bat",
        ".cmd",
        ".com",
        ".scr",
        ".pif",
        ".ps1",
        ".psm1",
        ".vbs",
        ".vbe",
        ".js",
        ".jse",
        ".wsf",
        ".wsh",
        ".hta",
        ".cpl",
        ".lnk",
        ".reg",
        ".jar",
        ".sh",
        ".bash",
        ".zsh",
        ".command",
        ".run",
        ".bin",
        ".appimage",
        ".app",
        ".pkg",
        ".dmg",
        ".deb",
        ".rpm",
        ".desktop",
        ".py",
        ".pyw",
    ]
)


class PathParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: PathStr = Field(
        min_length=1, max_length=4000, description="The file or folder to open ('~' is the home folder)"
    )
    reveal: bool = Field(default=False, description="Show it selected in the file manager instead of opening it")


class UrlParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1, max_length=4000, description="An http://, https:// or mailto: address")


def check_url(raw: str) -> str:
    url = raw.strip()
    if "://" not in url and not url.lower().startswith("mailto:") and "." in url.split("/", 1)[0]:
        url = "https://" + url  # "example.com" as users type it
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in URL_SCHEMES:
        raise ToolError(
            f"Only http://, https:// and mailto: addresses can be opened, not '{scheme or raw}'. "
            "To open a file use open_path."
        )
    if scheme == "mailto":
        if "@" not in parts.path:
            raise ToolError(f"'{raw}' has no e-mail address; write it like mailto:name@example.com.")
    elif not parts.hostname:
        raise ToolError(f"'{raw}' has no host name; give a full address such as https://example.com.")
    if any(ord(c) < 32 for c in url):
        raise ToolError("The address contains control characters; remove them.")
    return url


class OpenTool(BaseTool):
    @action(
        "Open a file or folder on this computer with its default application (documents, pictures, music, "
        "folders in the file manager), or show it in the file manager with reveal=true. Programs and scripts "
        "are not started this way."
    )
    async def path(self, params: PathParams, ctx: ToolContext) -> ToolResult:
        bridge: DesktopBridge = self.bridge("desktop")
        target = await asyncio.to_thread(resolve_user_path, params.path, ctx, must_exist=True)
        is_dir = await asyncio.to_thread(target.is_dir)
        if not params.reveal and not is_dir and _is_program(target):
            raise ToolError(
                f"{target.name} is a program or script; opening it would run it. Use reveal=true to show it in the "
                "file manager, or ask the user to start it themselves."
            )
        opened = await (bridge.reveal(target) if params.reveal else bridge.open_path(target))
        kind = "folder" if is_dir else "file"
        if not opened:
            raise ToolError(f"The system could not open the {kind} {target} (no application is set up for it?).")
        verb = "Showed" if params.reveal else "Opened"
        where = " in the file manager" if params.reveal else ""
        return ToolResult.ok(f"{verb} the {kind} {target}{where}.", data={"path": str(target), "kind": kind})

    @action(
        "Open a web address in the user's default browser, or a mailto: link in their e-mail program. Use it when "
        "the user wants to see a page themselves; to read a page yourself use web_fetch."
    )
    async def url(self, params: UrlParams, ctx: ToolContext) -> ToolResult:
        bridge: DesktopBridge = self.bridge("desktop")
        url = check_url(params.url)
        if not await bridge.open_url(url):
            raise ToolError(f"The system could not open {url} (no default browser or mail program?).")
        return ToolResult.ok(f"Opened {url} in the default application.", data={"url": url})


def _is_program(path: Path) -> bool:
    return path.suffix.lower() in PROGRAM_SUFFIXES
