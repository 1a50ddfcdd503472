"""CompanionService: the ``companion`` bridge. Runs the phone link's LAN server on the app's asyncio loop.

    service = CompanionService(settings.companion)
    service.events.subscribe(on_event)            # file received, delivered, device paired/revoked ...
    service.accept_device = ask_user              # async (PairingRequest) -> bool; or settings.auto_accept
    await service.start()                         # bind the chosen interface and port
    code = service.new_pairing_code()             # QR: code.url; text: code.url
    transfer = await service.send_files([path], device_id=...)
    await transfer.wait(120)                      # delivered = the phone confirmed the SHA-256
    await service.stop()

The service object lives as long as the app; start() and stop() may be called any number of times (the
app injects it into the registry while it runs, and again after a restart on another port).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from weclaw_desktop.companion import server
from weclaw_desktop.companion.devices import AuthProblem, Device, DeviceStore, token_hash
from weclaw_desktop.companion.events import CompanionEvent, EventHub, EventKind
from weclaw_desktop.companion.network import choose_address
from weclaw_desktop.companion.pairing import PairingCode, PairingCodes, RateLimiter
from weclaw_desktop.companion.transfers import (
    FileState,
    IncomingFile,
    IncomingSession,
    OutgoingFile,
    OutgoingTransfer,
    clean_partials,
    describe_file,
    free_bytes,
    new_id,
)
from weclaw_desktop.paths import AppPaths, app_paths, resource_path
from weclaw_desktop.settings import CompanionSettings
from weclaw_desktop.storage.db import Database

log = logging.getLogger("weclaw.companion")

ACCEPT_TIMEOUT_S = 120.0
TOUCH_EVERY_S = 30.0
DISK_RESERVE = 256 << 20  # never fill the disk to the last byte


@dataclass(frozen=True)
class PairingRequest:
    """What the desktop shows when a phone asks to pair."""

    name: str
    user_agent: str
    address: str


@dataclass(frozen=True)
class DeviceInfo:
    id: str
    name: str
    created_at: float
    last_seen: float
    online: bool


AcceptCallback = Callable[[PairingRequest], Awaitable[bool]]
Problem = web.Response


class CompanionService:
    def __init__(
        self,
        settings: CompanionSettings | None = None,
        *,
        paths: AppPaths | None = None,
        db: Database | None = None,
        desktop_name: str | None = None,
        static_dir: Path | None = None,
    ) -> None:
        self.settings = settings or CompanionSettings()
        self.paths = paths or app_paths()
        self._db = db
        self._store: DeviceStore | None = None
        self.desktop_name = desktop_name or socket.gethostname() or "WeClaw"
        self.static_dir = static_dir or resource_path("companion")
        self.events = EventHub()
        self.accept_device: AcceptCallback | None = None
        self.pairing = PairingCodes()
        self._pair_by_ip = RateLimiter(5, 60.0)
        self._pair_global = RateLimiter(30, 60.0)
        self._outgoing: dict[str, OutgoingTransfer] = {}
        self._incoming: dict[str, IncomingSession] = {}
        self._streams: dict[str, set[asyncio.Queue[tuple[str, dict[str, Any]] | None]]] = {}
        self._auth_cache: dict[str, Device] = {}
        self._touched: dict[str, float] = {}
        self._runner: web.AppRunner | None = None
        self.host = ""
        self.port = 0

    # --- lifecycle ------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._runner is not None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def incoming_dir(self) -> Path:
        return Path(self.settings.incoming_dir).expanduser() if self.settings.incoming_dir else self.paths.incoming

    @property
    def max_upload_bytes(self) -> int:
        return self.settings.max_upload_mb << 20

    async def store(self) -> DeviceStore:
        if self._store is None:
            if self._db is None:
                self._db = await asyncio.to_thread(Database.open, self.paths.database)
            self._store = await asyncio.to_thread(DeviceStore, self._db)
        return self._store

    async def start(self, host: str | None = None, port: int | None = None) -> None:
        """Bind ``host`` (default: the chosen interface, else the default-route LAN address) and ``port``."""
        if self.running:
            await self.stop()
        await self.store()
        address = host if host else await asyncio.to_thread(choose_address, self.settings.interface)
        wanted = self.settings.port if port is None else port
        await asyncio.to_thread(self.incoming_dir.mkdir, parents=True, exist_ok=True)
        await asyncio.to_thread(clean_partials, self.incoming_dir, 0.0)
        runner = web.AppRunner(server.build_app(self), access_log=None, shutdown_timeout=2.0)
        await runner.setup()
        site = web.TCPSite(runner, address, wanted)  # SO_REUSEADDR on POSIX: a restart may reuse the port
        try:
            await site.start()
        except OSError:
            await runner.cleanup()
            raise
        bound = runner.addresses
        self.port = int(bound[0][1]) if bound else wanted
        self.host = address
        self._runner = runner
        log.info("phone link listening on %s", self.base_url)
        self.events.emit(CompanionEvent(EventKind.SERVER_STARTED, data={"url": self.base_url}))

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        if runner is None:
            return
        for queues in self._streams.values():
            for q in queues:
                q.put_nowait(None)
        self.pairing.clear()
        await runner.cleanup()
        self._streams.clear()
        log.info("phone link stopped")
        self.events.emit(CompanionEvent(EventKind.SERVER_STOPPED))

    # --- pairing --------------------------------------------------------------------------------
    def new_pairing_code(self) -> PairingCode:
        if not self.running:
            raise RuntimeError("the phone link is off; start it before pairing")
        return self.pairing.new(self.base_url)

    def pair_attempt_allowed(self, remote: str) -> tuple[bool, float]:
        ok, wait = self._pair_by_ip.allow(remote)
        if not ok:
            return ok, wait
        return self._pair_global.allow("*")

    async def pair(self, token: str, name: str, user_agent: str, address: str) -> tuple[Device, str] | str:
        if not self.pairing.consume(token):
            log.warning("pairing attempt with an invalid code from %s", address)
            return "invalid"
        request = PairingRequest(name, user_agent, address)
        if not self.settings.auto_accept:
            if self.accept_device is None:
                log.warning("pairing from %s declined: no one to confirm and auto-accept is off", address)
                return "declined"
            try:
                accepted = await asyncio.wait_for(self.accept_device(request), ACCEPT_TIMEOUT_S)
            except TimeoutError:
                return "timeout"
            if not accepted:
                return "declined"
        store = await self.store()
        device, token_value = await asyncio.to_thread(store.add, name, user_agent)
        self._auth_cache[token_hash(token_value)] = device
        log.info("paired %s (%s)", device.name, device.id)
        self.events.emit(CompanionEvent(EventKind.DEVICE_PAIRED, device.id, device.name))
        return device, token_value

    async def authenticate(self, token: str) -> Device | AuthProblem:
        key = token_hash(token)
        device = self._auth_cache.get(key)
        if device is None:
            store = await self.store()
            device = await asyncio.to_thread(store.by_token, token)
            if device is None:
                return AuthProblem.UNKNOWN
            self._auth_cache[key] = device
        problem = device.problem()
        if problem is not None:
            return problem
        now = time.time()
        if now - self._touched.get(device.id, 0.0) >= TOUCH_EVERY_S:
            self._touched[device.id] = now
            store = await self.store()
            await asyncio.to_thread(store.touch, device.id, now)
            device = dataclasses.replace(device, last_seen=now, expires_at=now + (device.expires_at - device.last_seen))
            self._auth_cache[key] = device
        return device

    async def list_devices(self) -> list[DeviceInfo]:
        store = await self.store()
        devices = await asyncio.to_thread(store.list)
        return [DeviceInfo(d.id, d.name, d.created_at, d.last_seen, self.is_online(d.id)) for d in devices]

    async def revoke(self, device_id: str) -> bool:
        store = await self.store()
        device = await asyncio.to_thread(store.get, device_id)
        changed = await asyncio.to_thread(store.revoke, device_id)
        for key in [k for k, d in self._auth_cache.items() if d.id == device_id]:
            del self._auth_cache[key]
        self._push(device_id, "revoked", {})
        for transfer in self._outgoing.values():
            if transfer.device_id == device_id:
                self._cancel_transfer(transfer, "the phone was removed")
        if changed:
            self.events.emit(CompanionEvent(EventKind.DEVICE_REVOKED, device_id, device.name if device else ""))
        return changed

    async def expire(self, device_id: str, when: float | None = None) -> None:
        """End a device's pairing at ``when`` (default now) without revoking it."""
        store = await self.store()
        await asyncio.to_thread(store.set_expiry, device_id, when or time.time())
        for key in [k for k, d in self._auth_cache.items() if d.id == device_id]:
            del self._auth_cache[key]

    # --- live stream to the phone ---------------------------------------------------------------
    def is_online(self, device_id: str) -> bool:
        return bool(self._streams.get(device_id))

    def open_stream(self, device: Device) -> asyncio.Queue[tuple[str, dict[str, Any]] | None]:
        queue: asyncio.Queue[tuple[str, dict[str, Any]] | None] = asyncio.Queue()
        queues = self._streams.setdefault(device.id, set())
        queues.add(queue)
        if len(queues) == 1:
            self.events.emit(CompanionEvent(EventKind.DEVICE_ONLINE, device.id, device.name))
        return queue

    def close_stream(self, device: Device, queue: asyncio.Queue[tuple[str, dict[str, Any]] | None]) -> None:
        queues = self._streams.get(device.id)
        if queues is None:
            return
        queues.discard(queue)
        if not queues:
            del self._streams[device.id]
            self.events.emit(CompanionEvent(EventKind.DEVICE_OFFLINE, device.id, device.name))

    def _push(self, device_id: str, kind: str, data: dict[str, Any]) -> None:
        for q in self._streams.get(device_id, ()):
            q.put_nowait((kind, data))

    def snapshot(self, device: Device) -> dict[str, Any]:
        self._purge()
        return {
            "device": {"id": device.id, "name": device.name},
            "desktop": self.desktop_name,
            "offers": [t.public() for t in self._outgoing.values() if t.device_id == device.id and t.pending],
        }

    # --- desktop -> phone -----------------------------------------------------------------------
    async def send_files(self, paths: Sequence[Path], *, device_id: str) -> OutgoingTransfer:
        """Offer files to a paired device. The caller checked the paths (pathguard); this hashes them."""
        if not self.running:
            raise RuntimeError("the phone link is off")
        store = await self.store()
        device = await asyncio.to_thread(store.get, device_id)
        if device is None or device.problem() is not None:
            raise LookupError(f"no paired device with id {device_id!r}")
        files: dict[str, OutgoingFile] = {}
        for p in paths:
            f = await asyncio.to_thread(describe_file, Path(p))
            files[f.id] = f
        transfer = OutgoingTransfer(id=new_id(), device_id=device_id, files=files)
        self._purge()
        self._outgoing[transfer.id] = transfer
        self._push(device_id, "offer", transfer.public())
        return transfer

    def cancel(self, session_id: str, reason: str = "cancelled on the desktop") -> bool:
        transfer = self._outgoing.get(session_id)
        if transfer is not None:
            self._cancel_transfer(transfer, reason)
            return True
        session = self._incoming.pop(session_id, None)
        if session is not None:
            session.cancelled = True
            self._push(session.device_id, "cancel", {"session": session_id})
            return True
        return False

    def _cancel_transfer(self, transfer: OutgoingTransfer, reason: str) -> None:
        transfer.cancelled = True
        for f in transfer.files.values():
            if not f.state.final:
                f.finish(FileState.CANCELLED, reason)
        self._push(transfer.device_id, "cancel", {"session": transfer.id})

    def outgoing_file(
        self, device: Device, session: str, file_id: str, token: str, *, allow_final: bool = False
    ) -> tuple[OutgoingTransfer, OutgoingFile] | Problem:
        transfer = self._outgoing.get(session)
        f = transfer.files.get(file_id) if transfer is not None and transfer.device_id == device.id else None
        if transfer is None or f is None:
            return server.error(404, "No such file offer.", "not_found")
        if not token or token != f.token:
            return server.error(403, "Wrong file token.", "forbidden")
        if transfer.cancelled or f.state is FileState.CANCELLED:
            return server.error(410, "This transfer was cancelled.", "cancelled")
        if transfer.expired:
            return server.error(410, "This offer has expired. Ask for the file again.", "expired")
        if f.state.final and not allow_final:
            return server.error(410, "This file transfer is finished.", "finished")
        return transfer, f

    def file_progress(self, transfer: OutgoingTransfer, f: OutgoingFile, end: int, *, whole: bool) -> None:
        f.served = max(f.served, end)
        if whole and not f.state.final:
            f.state = FileState.SENT  # the browser saves it itself and cannot confirm the SHA-256
            f.done.set()
        self.events.emit(
            CompanionEvent(
                EventKind.TRANSFER_PROGRESS,
                transfer.device_id,
                data={"session": transfer.id, "file": f.id, "name": f.name, "bytes": f.served, "size": f.size},
            )
        )

    def file_failed(self, transfer: OutgoingTransfer, f: OutgoingFile, reason: str) -> None:
        if f.state.final:
            return
        f.finish(FileState.FAILED, reason)
        self._push(transfer.device_id, "state", {"session": transfer.id, "file": f.id, "state": "failed"})
        self.events.emit(
            CompanionEvent(
                EventKind.TRANSFER_FAILED,
                transfer.device_id,
                data={"session": transfer.id, "file": f.id, "name": f.name, "reason": reason},
            )
        )

    def acknowledge(self, transfer: OutgoingTransfer, f: OutgoingFile, digest: str, problem: str) -> FileState:
        if f.state.final:
            return f.state
        if problem:
            self.file_failed(transfer, f, f"the phone reported: {problem}")
        elif digest != f.sha256:
            f.phone_sha256 = digest
            self.file_failed(transfer, f, "the phone received different bytes (SHA-256 mismatch)")
        else:
            f.phone_sha256 = digest
            f.served = f.size
            f.finish(FileState.DELIVERED)
            self._push(transfer.device_id, "state", {"session": transfer.id, "file": f.id, "state": "delivered"})
            self.events.emit(
                CompanionEvent(
                    EventKind.DELIVERY_ACKNOWLEDGED,
                    transfer.device_id,
                    data={"session": transfer.id, "file": f.id, "name": f.name, "sha256": digest, "path": str(f.path)},
                )
            )
        return f.state

    # --- phone -> desktop -----------------------------------------------------------------------
    async def prepare_upload(self, device: Device, files: dict[str, IncomingFile]) -> IncomingSession | Problem:
        self._purge()
        total = sum(f.size for f in files.values())
        reserved = sum(s.reserved_bytes for s in self._incoming.values())
        free = await asyncio.to_thread(free_bytes, self.incoming_dir)
        if total + reserved + DISK_RESERVE > free:
            return server.error(507, "The desktop does not have enough free disk space for these files.", "no_space")
        session = IncomingSession(id=new_id(), device_id=device.id, files=files)
        self._incoming[session.id] = session
        return session

    def incoming_file(
        self, device: Device, session_id: str, file_id: str, token: str
    ) -> tuple[IncomingSession, IncomingFile] | Problem:
        session = self._incoming.get(session_id)
        f = session.files.get(file_id) if session is not None and session.device_id == device.id else None
        if session is None or f is None:
            return server.error(404, "No such upload.", "not_found")
        if not token or token != f.token:
            return server.error(403, "Wrong file token.", "forbidden")
        if session.cancelled or session.expired:
            return server.error(410, "This upload session has ended.", "expired")
        return session, f

    def upload_done(self, session: IncomingSession, f: IncomingFile) -> None:
        device = next((d for d in self._auth_cache.values() if d.id == session.device_id), None)
        log.info("received %s (%d bytes) from %s", f.saved_as, f.size, session.device_id)
        self.events.emit(
            CompanionEvent(
                EventKind.FILE_RECEIVED,
                session.device_id,
                device.name if device else "",
                {
                    "name": f.saved_as.name if f.saved_as else f.name,
                    "path": str(f.saved_as),
                    "size": f.size,
                    "sha256": f.received_sha256,
                    "verified": bool(f.sha256),
                    "mime": f.mime,
                },
            )
        )
        if all(x.state.final for x in session.files.values()):
            self._incoming.pop(session.id, None)

    def upload_failed(self, session: IncomingSession, f: IncomingFile, reason: str) -> None:
        self.events.emit(
            CompanionEvent(
                EventKind.TRANSFER_FAILED,
                session.device_id,
                data={"session": session.id, "file": f.id, "name": f.name, "reason": reason, "direction": "in"},
            )
        )

    def cancel_from_phone(self, device: Device, session_id: str) -> bool:
        transfer = self._outgoing.get(session_id)
        if transfer is not None and transfer.device_id == device.id:
            self._cancel_transfer(transfer, "declined on the phone")
            return True
        session = self._incoming.get(session_id)
        if session is not None and session.device_id == device.id:
            session.cancelled = True
            del self._incoming[session_id]
            return True
        return False

    def _purge(self) -> None:
        for sid in [k for k, t in self._outgoing.items() if t.expired]:
            t = self._outgoing.pop(sid)
            for f in t.files.values():
                if not f.state.final:
                    f.finish(FileState.FAILED, "the offer expired before the phone downloaded it")
        for sid in [k for k, s in self._incoming.items() if s.expired]:
            del self._incoming[sid]


def attach_to_registry(service: CompanionService, inject: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
    """Keep the ``companion`` bridge injected while the server runs (``inject`` = ``registry.inject``)."""

    def on_event(event: CompanionEvent) -> None:
        if event.kind is EventKind.SERVER_STARTED:
            inject({"companion": service})
        elif event.kind is EventKind.SERVER_STOPPED:
            inject({"companion": None})

    if service.running:
        inject({"companion": service})
    return service.events.subscribe(on_event)
