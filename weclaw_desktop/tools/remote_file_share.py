"""remote_file_share: send files from this computer to the user's paired phone over the LAN.

The phone link (the ``companion`` bridge, :class:`~weclaw_desktop.companion.CompanionService`) offers the
files to the phone page, encrypted; the phone fetches them record by record, each authenticated. Results
say, per file, only what is true: delivered (the phone holds the whole authenticated file and its save was
started by the user's tap), ready (on the phone, complete, waiting for the user to tap Save there), queued
or in progress (it stays on the phone page and continues when the page is open), or failed (the reason).
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.companion.bridge import CompanionBridge
from weclaw_desktop.companion.service import DeviceInfo
from weclaw_desktop.companion.transfers import OFFER_TTL_S, FileState, OutgoingTransfer
from weclaw_desktop.toolkit.base import BaseTool, NoParams, ToolContext, ToolError, ToolResult, action
from weclaw_desktop.tools.common import human_size
from weclaw_desktop.tools.pathguard import RELATIVE_NOTE, PathGuard

PAIR_HINT = (
    "No phone is paired yet. To pair one: in the WeClaw desktop app press the Phone button (手机) in the "
    "toolbar, then scan the QR code with the phone's camera and open the link (phone and computer on the same "
    "Wi-Fi). After the phone shows 'Connected', ask again."
)
LINK_OFF = (
    "The phone link is turned off. In the WeClaw desktop app press the Phone button (手机) to turn it on, "
    "then ask again."
)
MAX_FILES = 100


class RemoteFileShareConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ack_timeout_s: float = Field(
        120.0, ge=1, le=3600, description="how long to wait for a connected phone to confirm delivery"
    )
    offline_wait_s: float = Field(
        10.0, ge=0, le=600, description="how long to wait when the phone page is not open (the offer stays queued)"
    )
    tap_wait_s: float = Field(
        30.0, ge=0, le=600, description="once the phone holds the files, how long to wait for the user's tap to save"
    )


class SendFileParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description=f"The file on this computer to send to the phone. {RELATIVE_NOTE}")
    device: str | None = Field(
        None,
        description="Name or id of the paired phone (from list_devices). Leave empty for the phone used most recently.",
    )


class SendFilesParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    paths: list[str] = Field(
        min_length=1, max_length=MAX_FILES, description=f"The files to send, one path each. {RELATIVE_NOTE}"
    )
    device: str | None = Field(
        None,
        description="Name or id of the paired phone (from list_devices). Leave empty for the phone used most recently.",
    )


class RemoteFileShareTool(BaseTool):
    Config = RemoteFileShareConfig

    @action(
        "Send one file from this computer to the user's phone over the local network (the paired WeClaw phone "
        "page). Use it when the user asks to send, share or transfer a file to their phone. Reports truthfully "
        "whether the file was saved on the phone, or is on the phone waiting for the user to tap Save."
    )
    async def send_file(self, params: SendFileParams, ctx: ToolContext) -> ToolResult:
        return await self._send([params.path], params.device, ctx)

    @action(
        "Send several files from this computer to the user's phone in one go. Use it instead of repeated "
        "send_file calls. Reports per file: delivered (saved on the phone), ready (tap Save on the phone), "
        "queued or failed with the reason."
    )
    async def send_files(self, params: SendFilesParams, ctx: ToolContext) -> ToolResult:
        return await self._send(params.paths, params.device, ctx)

    @action(
        "List the phones paired with this computer: name, id, whether the phone page is open now, last seen. "
        "Use it to pick a device for send_file or to check that a phone is connected."
    )
    async def list_devices(self, params: NoParams, ctx: ToolContext) -> ToolResult:
        service = self._service()
        devices = await service.list_devices()
        if not devices:
            return ToolResult.ok(PAIR_HINT, data={"devices": [], "link_on": service.running})
        lines = [
            f"- {d.name} (id {d.id}): {'connected now' if d.online else 'not connected'}, last seen {_ago(d.last_seen)}"
            for d in devices
        ]
        head = "Paired phones:" if service.running else "Paired phones (the phone link is off now):"
        return ToolResult.ok(
            "\n".join([head, *lines]),
            data={"devices": [_device_data(d) for d in devices], "link_on": service.running},
        )

    # --- sending ----------------------------------------------------------------------------------
    def _service(self) -> CompanionBridge:
        service: CompanionBridge = self.bridge("companion")
        return service

    async def _send(self, raw_paths: list[str], device: str | None, ctx: ToolContext) -> ToolResult:
        service = self._service()
        if not service.running:
            raise ToolError(LINK_OFF)
        devices = await service.list_devices()
        if not devices:
            return ToolResult.fail(PAIR_HINT, data={"devices": []})
        target = _pick_device(devices, device)
        paths = await asyncio.to_thread(_resolve_files, raw_paths, ctx)
        ctx.progress(0.0, f"checking {len(paths)} file(s)", force=True)
        transfer = await service.send_files(paths, device_id=target.id)
        online = service.is_online(target.id)
        timeout = self.config.ack_timeout_s if online else self.config.offline_wait_s

        def report(t: OutgoingTransfer) -> None:
            done, total = t.progress()
            saved, held = t.count(FileState.DELIVERED), t.count(FileState.READY)
            ctx.progress(
                done / total if total else None,
                f"{target.name}: {saved} of {len(t.files)} file(s) saved, {held} waiting for a tap, "
                f"{human_size(done)} of {human_size(total)} on the phone",
            )

        on_phone = frozenset({FileState.READY, FileState.DELIVERED, FileState.FAILED, FileState.CANCELLED})
        try:
            fetched = await transfer.wait(timeout, report, settled=on_phone)
            if fetched and transfer.count(FileState.READY):
                await transfer.wait(self.config.tap_wait_s, report)  # the user taps Save (or Save all) there
        except asyncio.CancelledError:
            service.cancel(transfer.id, "the request was cancelled on the desktop")
            raise
        report(transfer)
        return _summary(transfer, target, online)


def _resolve_files(raw_paths: list[str], ctx: ToolContext) -> list[Path]:
    guard = PathGuard(ctx)
    out: list[Path] = []
    for raw in raw_paths:
        path = guard.resolve(raw, must_exist=True)
        if path.is_dir():
            raise ToolError(f"'{raw}' is a folder. Send the files inside it, or make a zip archive first.")
        if not path.is_file():
            raise ToolError(f"'{raw}' is not a regular file.")
        if not os.access(path, os.R_OK):
            raise ToolError(f"'{raw}' cannot be read (permission denied).")
        if path not in out:
            out.append(path)
    return out


def _pick_device(devices: list[DeviceInfo], wanted: str | None) -> DeviceInfo:
    if wanted:
        key = wanted.strip().casefold()
        exact = [d for d in devices if d.id == wanted.strip() or d.name.casefold() == key]
        matches = exact or [d for d in devices if key in d.name.casefold()]
        if len(matches) == 1:
            return matches[0]
        names = ", ".join(f"{d.name} (id {d.id})" for d in devices)
        if not matches:
            raise ToolError(f"No paired phone is called '{wanted}'. Paired phones: {names}.")
        raise ToolError(f"'{wanted}' matches several phones; use the id. Paired phones: {names}.")
    online = [d for d in devices if d.online]
    return max(online or devices, key=lambda d: d.last_seen)


def _summary(transfer: OutgoingTransfer, device: DeviceInfo, online: bool) -> ToolResult:
    rows: list[dict[str, Any]] = []
    lines: list[str] = []
    days = int(OFFER_TTL_S // 86400)
    for f in sorted(transfer.files.values(), key=lambda f: f.seq):
        row: dict[str, Any] = {"name": f.name, "path": str(f.path), "size": f.size, "state": f.state.value}
        if f.state is FileState.DELIVERED:
            row["sha256"] = f.sha256
            lines.append(
                f"- {f.name} ({human_size(f.size)}): delivered: saved on the phone, every part authenticated "
                f"(SHA-256 {f.sha256})"
            )
        elif f.state is FileState.READY:
            lines.append(
                f"- {f.name} ({human_size(f.size)}): ready on the phone, complete and authenticated, but not saved "
                "yet: the user must tap Save (or Save all) on the phone page"
            )
        elif f.state in (FileState.QUEUED, FileState.SENDING):
            row["state"] = FileState.QUEUED.value if f.state is FileState.QUEUED else "in_progress"
            why = "the phone has not finished fetching it yet" if online else "the WeClaw page is not open on the phone"
            lines.append(
                f"- {f.name} ({human_size(f.size)}): {row['state'].replace('_', ' ')} ({why}); it stays on the phone "
                f"page for {days} days and continues when the page is open"
            )
        else:
            row["reason"] = f.error or f.state.value
            lines.append(f"- {f.name}: {f.state.value} ({row['reason']})")
        rows.append(row)
    failed = sum(1 for r in rows if r["state"] in ("failed", "cancelled"))
    delivered = sum(1 for r in rows if r["state"] == "delivered")
    ready = sum(1 for r in rows if r["state"] == "ready")
    head = f"Sent to {device.name}: {delivered} of {len(rows)} file(s) delivered (saved on the phone)."
    if ready:
        head += f" {ready} on the phone waiting for the user to tap Save there."
    if not online:
        head += " The phone is not connected now: ask the user to open the WeClaw page on the phone."
    data = {"device": _device_data(device), "session": transfer.id, "files": rows}
    text = "\n".join([head, *lines])
    if failed == len(rows):
        return ToolResult.fail(text, data=data)
    return ToolResult.ok(text, data=data)


def _device_data(d: DeviceInfo) -> dict[str, Any]:
    return {"id": d.id, "name": d.name, "online": d.online, "last_seen": round(d.last_seen)}


def _ago(ts: float) -> str:
    s = max(0, int(time.time() - ts))
    if s < 90:
        return "just now"
    if s < 5400:
        return f"{s // 60} minutes ago"
    if s < 172800:
        return f"{s // 3600} hours ago"
    return f"{s // 86400} days ago"
