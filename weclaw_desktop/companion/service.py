"""The phone link's state and rules, with no HTTP in it (``server.py`` is the HTTP face, ``link.py`` runs both).

    core = CompanionCore(settings, secrets=SecretStore())
    await core.open()                               # master key, database, persisted offers and uploads
    core.advertise("192.168.1.20", 8765)            # the address the QR code and the Host check use
    code = core.new_pairing_code()                  # code.url goes into the QR code (secret in the fragment)
    transfer = await core.send_files([path], device_id=...)

Every refusal is a :class:`~.problems.Problem`. Pairing, sessions and device keys are here; the two
directions of transfer are :mod:`.outbox` and :mod:`.inbox`. The clock is injectable (tests move it).
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from weclaw_desktop.clock import SYSTEM_CLOCK, Clock
from weclaw_desktop.companion import wire
from weclaw_desktop.companion.crypto import (
    CryptoError,
    b64d,
    b64e,
    mac,
    mac_ok,
    open_sealed,
    seal,
)
from weclaw_desktop.companion.devices import KEY_LIFETIME_S, KEY_RENEW_AFTER_S, Device, DeviceStore, phone_hash
from weclaw_desktop.companion.events import CompanionEvent, EventHub, EventKind
from weclaw_desktop.companion.inbox import Inbox
from weclaw_desktop.companion.keys import MasterKey, Secrets
from weclaw_desktop.companion.limits import Limits
from weclaw_desktop.companion.outbox import Outbox
from weclaw_desktop.companion.pairing import PairingCode, PairingCodes, RateLimiter
from weclaw_desktop.companion.problems import Problem
from weclaw_desktop.companion.sessions import Challenges, Session, Sessions
from weclaw_desktop.companion.transfer_store import TransferStore
from weclaw_desktop.companion.transfers import OFFER_TTL_S, safe_name
from weclaw_desktop.paths import AppPaths, app_paths, resource_path
from weclaw_desktop.settings import CompanionSettings
from weclaw_desktop.storage.db import Database

log = logging.getLogger("weclaw.companion")

ACCEPT_TIMEOUT_S = 120.0
TOUCH_EVERY_S = 30.0
StreamItem = tuple[str, dict[str, Any]] | None


@dataclass(frozen=True)
class PairingRequest:
    """What the desktop shows when a phone asks to pair."""

    name: str
    user_agent: str
    address: str
    again: bool = False  # this phone was paired before: its entry and key are replaced


@dataclass(frozen=True)
class DeviceInfo:
    id: str
    name: str
    created_at: float
    last_seen: float
    online: bool


AcceptCallback = Callable[[PairingRequest], Awaitable[bool]]


class CompanionCore:
    def __init__(
        self,
        settings: CompanionSettings | None = None,
        *,
        paths: AppPaths | None = None,
        db: Database | None = None,
        secrets: Secrets | None = None,
        desktop_name: str | None = None,
        static_dir: Path | None = None,
        clock: Clock = SYSTEM_CLOCK,
        limits: Limits | None = None,
    ) -> None:
        if secrets is None:
            from weclaw_desktop.secrets import SecretStore

            secrets = SecretStore()
        self.settings = settings or CompanionSettings()
        self.paths = paths or app_paths()
        self.clock: Callable[[], float] = clock.time  # wall-clock seconds: expiry, rate limits, challenges
        self.limits = limits or Limits()
        self.master = MasterKey(secrets)
        self.desktop_name = desktop_name or socket.gethostname() or "WeClaw"
        self.static_dir = static_dir or resource_path("companion")
        self.events = EventHub()
        self.accept_device: AcceptCallback | None = None
        self.pairing = PairingCodes(clock=self.clock)
        self.challenges = Challenges(self.clock)
        self.sessions = Sessions(self.clock)
        self._pair_failures = RateLimiter(self.limits.pair_failures_per_min, 60.0, clock.monotonic)
        self._hellos = RateLimiter(self.limits.hellos_per_min, 60.0, clock.monotonic)
        self._db = db
        self._own_db = db is None
        self._store: DeviceStore | None = None
        self._devices: dict[str, Device] = {}
        self._touched: dict[str, float] = {}
        self._streams: dict[str, set[asyncio.Queue[StreamItem]]] = {}
        self._cutters: list[Callable[[str], None]] = []
        self.outbox = Outbox(self.master, self.clock, self.emit, self._push, self.device)
        self.inbox = Inbox(
            self.master,
            self.clock,
            self.emit,
            self._push,
            lambda: self.incoming_dir,
            lambda: self.max_upload_bytes,
            self.limits,
        )
        self.host = ""
        self.port = 0
        self.opened = False

    # --- set-up ---------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def authority(self) -> str:
        """What the Host header must say (DNS rebinding sends another name)."""
        return f"{self.host}:{self.port}"

    @property
    def incoming_dir(self) -> Path:
        return Path(self.settings.incoming_dir).expanduser() if self.settings.incoming_dir else self.paths.incoming

    @property
    def max_upload_bytes(self) -> int:
        return self.settings.max_upload_mb << 20

    @property
    def keys_persistent(self) -> bool:
        """False when there is no usable keyring: phones must pair again after a restart."""
        return self.master.persistent

    @property
    def store(self) -> DeviceStore:
        if self._store is None:
            raise RuntimeError("CompanionCore.open() first")
        return self._store

    @property
    def transfers(self) -> TransferStore:
        return self.outbox.store

    async def open(self) -> None:
        """Load the master key and the database, and bring back offers and uploads (idempotent)."""
        if self.opened:
            return
        await asyncio.to_thread(self.master.load)
        if self._db is None:
            self._db = await asyncio.to_thread(Database.open, self.paths.database)
        db = self._db
        self._store = await asyncio.to_thread(DeviceStore, db)
        store = TransferStore(db)
        check = self.master.check_value()
        known = await asyncio.to_thread(self._store.meta, "key_check")
        if known is not None and known != check:
            gone = await asyncio.to_thread(self._store.revoke_all, self.clock(), "keys_lost")
            if gone:
                log.warning(
                    "the phone link's key is not the one phones were paired with: %d phone(s) must pair again", gone
                )
        if known != check:
            await asyncio.to_thread(self._store.set_meta, "key_check", check)
        await asyncio.to_thread(store.prune, self.clock() - OFFER_TTL_S)
        lost = known is not None and known != check
        await self.outbox.load(store, lost=lost)
        await asyncio.to_thread(self.incoming_dir.mkdir, parents=True, exist_ok=True)
        await self.inbox.load(store, lost=lost)
        self.opened = True

    def close(self) -> None:
        """Forget live state (sessions, streams); the database keeps everything else."""
        for queues in self._streams.values():
            for q in queues:
                q.put_nowait(None)
        self._streams.clear()
        self.sessions.clear()
        self.pairing.clear()
        if self._own_db and self._db is not None:
            self._db.close()
            self._db = None
            self._store = None
            self.opened = False

    def advertise(self, host: str, port: int) -> None:
        self.host, self.port = host, port

    def on_cut(self, cutter: Callable[[str], None]) -> Callable[[], None]:
        """``cutter(device_id)`` is called when a device is revoked: it must end that device's requests now."""
        self._cutters.append(cutter)
        return lambda: self._cutters.remove(cutter) if cutter in self._cutters else None

    def emit(self, kind: EventKind, device_id: str = "", **data: Any) -> None:
        device = self._devices.get(device_id)
        self.events.emit(CompanionEvent(kind, device_id, device.name if device else "", data))

    # --- pairing --------------------------------------------------------------------------------
    def new_pairing_code(self) -> PairingCode:
        if not self.port:
            raise RuntimeError("the phone link is off; start it before pairing")
        return self.pairing.new(self.base_url)

    def suspect(self, source: str) -> bool:
        """This address sent a wrong pairing proof within the last minute."""
        return self._pair_failures.recent(source)

    def pair_blocked(self, source: str) -> None:
        wait = self._pair_failures.blocked(source)
        if wait > 0:
            raise Problem("rate_limited", "Too many wrong pairing attempts. Wait a minute.", retry_after=wait)

    async def pair(
        self, body: dict[str, Any], user_agent: str, source: str, proven: Callable[[], None] = lambda: None
    ) -> dict[str, Any]:
        """Check the phone's proof of the QR secret, ask the user, and hand the phone its device key (sealed).
        ``proven`` is called as soon as the proof checks out (the HTTP layer then protects the connection)."""
        self.pair_blocked(source)
        pid = wire.text(body, "pid", limit=20)
        code = self.pairing.find(pid)
        try:
            if code is None:
                raise CryptoError("no such code")
            hello = json.loads(open_sealed(code.key, body.get("req"), f"weclaw/v1/pair-req|{pid}"))
            if not isinstance(hello, dict):
                raise CryptoError("not an object")
            phone = wire.text(hello, "phone", limit=64)
            nonce = wire.text(hello, "nonce", limit=64)
            name = safe_name(str(hello.get("name") or ""), "Phone")[:64]
        except (CryptoError, ValueError, Problem):
            self._pair_failures.hit(source)
            log.warning("pairing attempt with a wrong or old code from %s", source)
            raise Problem(
                "invalid", "This pairing code is wrong, already used or expired. Show a new QR code on the desktop."
            ) from None
        if not self.pairing.consume(code):
            raise Problem("invalid", "This pairing code was just used. Show a new QR code on the desktop.")
        proven()
        self.emit(EventKind.PAIRING_CODE_USED)
        again = bool(await asyncio.to_thread(self._ids_for_phone, phone_hash(phone)))
        request = PairingRequest(name, user_agent[:300], source, again)
        if not self.settings.auto_accept:
            if self.accept_device is None:
                log.warning("pairing from %s declined: no one to confirm and auto-accept is off", source)
                raise Problem("declined", "The desktop did not accept this phone.")
            try:
                accepted = await asyncio.wait_for(self.accept_device(request), ACCEPT_TIMEOUT_S)
            except TimeoutError:
                raise Problem("timeout", "Nobody confirmed on the desktop in time. Scan a new QR code.") from None
            if not accepted:
                raise Problem("declined", "The desktop did not accept this phone.")
        device, replaced = await asyncio.to_thread(self.store.pair, phone, name, user_agent, self.clock())
        if replaced:
            self._end_device_activity(device.id, "paired again")
        self._devices[device.id] = device
        log.info("paired %s (%s)%s", device.name, device.id, " again" if replaced else "")
        self.emit(EventKind.DEVICE_PAIRED, device.id, replaced=replaced)
        key = self.master.device_key(device.id, device.key_gen, device.key_salt)
        granted = {
            "device": device.id,
            "gen": device.key_gen,
            "key": b64e(key),
            "name": device.name,
            "desktop": self.desktop_name,
            "expires_at": device.expires_at,
        }
        return {"res": seal(code.key, wire.dumps(granted), f"weclaw/v1/pair-res|{pid}|{nonce}")}

    def _ids_for_phone(self, h: str) -> set[str]:
        rows = self.store.db.query("SELECT id FROM companion_devices WHERE phone_hash=?", (h,))
        return {str(r["id"]) for r in rows}

    # --- sessions -------------------------------------------------------------------------------
    def hello(self, source: str) -> dict[str, Any]:
        allowed, wait = self._hellos.allow(source)
        if not allowed:
            raise Problem("rate_limited", "Too many requests. Wait a moment.", retry_after=wait)
        return {"challenge": self.challenges.mint(), "time": self.clock()}

    async def device(self, device_id: str) -> Device | None:
        found = self._devices.get(device_id)
        if found is None:
            found = await asyncio.to_thread(self.store.get, device_id)
            if found is not None:
                self._devices[device_id] = found
        return found

    async def open_session(self, body: dict[str, Any]) -> dict[str, Any]:
        device_id = wire.ident(body, "device")
        gen = wire.whole(body, "gen", low=1, high=1 << 31)
        challenge_text = wire.text(body, "challenge", limit=64)
        nonce_text = wire.text(body, "nonce", limit=64)
        try:
            proof = b64d(wire.text(body, "mac", limit=64), 32)
            nonce = b64d(nonce_text, 16)
        except CryptoError:
            raise Problem("bad_request", "The session request is malformed.") from None
        device = await self.device(device_id)
        if device is None:
            raise Problem("unknown", "This phone is not paired with this desktop. Scan the QR code to pair.")
        salt = device.any_salt(gen)
        key = self.master.device_key(device.id, gen, salt) if salt is not None else b""
        parts = ("weclaw/v1/session", device_id, str(gen), challenge_text, nonce_text)
        if not key or not mac_ok(key, proof, *parts):
            raise Problem("auth", "This phone's key is not accepted. Pair again if this keeps happening.")
        challenge = self.challenges.redeem(challenge_text)
        if challenge is None:
            raise Problem("replay", "This session request is old or was used already.")
        now = self.clock()
        problem = device.problem(now) or (None if device.salt_for(gen, now) else "expired")
        if problem is not None:
            texts = {
                "revoked": "This phone was removed on the desktop. Scan a new QR code to pair again.",
                "expired": "This pairing has expired. Scan a new QR code to pair again.",
            }
            raise Problem(
                problem, texts[problem], proof=b64e(mac(key, "weclaw/v1/gone", problem, challenge_text, nonce_text))
            )
        session = self.sessions.open(device.id, gen, key, challenge, nonce)
        renewal: dict[str, Any] | None = None
        if gen == device.key_gen and now - device.key_issued_at >= KEY_RENEW_AFTER_S:
            renewed = await asyncio.to_thread(self.store.renew, device.id, now)
            if renewed is not None:
                device = self._devices[device.id] = renewed
                new_key = self.master.device_key(device.id, device.key_gen, device.key_salt)
                renewal = {"gen": device.key_gen, "key": b64e(new_key), "expires_at": device.expires_at}
        elif gen == device.key_gen and device.prev_gen is not None:
            await asyncio.to_thread(self.store.drop_previous, device.id)
            refreshed = await asyncio.to_thread(self.store.get, device.id)
            if refreshed is not None:
                device = self._devices[device.id] = refreshed
        await self._touch(device, now)
        info = {
            "device": device.id,
            "name": device.name,
            "desktop": self.desktop_name,
            "time": now,
            "expires_at": device.expires_at,
            "renew": renewal,
        }
        return {
            "session": session.id,
            "proof": b64e(mac(key, "weclaw/v1/session-ok", session.id, challenge_text, nonce_text)),
            "info": seal(session.s2c, wire.dumps(info), f"weclaw/v1/session-info|{session.id}"),
        }

    async def _touch(self, device: Device, now: float) -> None:
        if now - self._touched.get(device.id, 0.0) >= TOUCH_EVERY_S:
            self._touched[device.id] = now
            await asyncio.to_thread(self.store.touch, device.id, now)

    async def authenticate(self, header: str, method: str, path: str, body_digest: str) -> tuple[Session, str, int]:
        """The session of an authenticated request, with its lane and sequence number, or a Problem."""
        auth = wire.parse_auth(header)
        if auth is None:
            raise Problem("auth", "This request is not signed. Reload the page.")
        session = self.sessions.get(auth.session)
        if session is None:
            raise Problem("session", "The desktop restarted or the session ended. The page reconnects by itself.")
        if not mac_ok(session.mac_key, auth.mac, *wire.request_parts(method, path, auth.lane, auth.seq, body_digest)):
            raise Problem("auth", "This request's signature is wrong.")
        taken = session.take(auth.lane, auth.seq)
        if taken == "replay":
            raise Problem("replay", "This request was already handled (replayed or out of order).")
        if taken == "full":
            raise Problem("session", "This session is full. The page opens a new one by itself.")
        device = await self.device(session.device_id)
        if device is None or device.problem(self.clock()) is not None:
            self.sessions.end_device(session.device_id)
            raise Problem("session", "This phone's pairing ended.")
        await self._touch(device, self.clock())
        return session, auth.lane, auth.seq

    def open_request(self, session: Session, method: str, path: str, lane: str, seq: int, raw: bytes) -> dict[str, Any]:
        """The JSON a phone sealed into a request body (bound to this request)."""
        envelope = wire.parse_json_object(raw)
        try:
            plain = open_sealed(session.c2s, envelope, wire.request_ad(method, path, lane, seq))
        except CryptoError:
            raise Problem("auth", "The request body does not authenticate.") from None
        return wire.parse_json_object(plain)

    def seal_response(self, session: Session, lane: str, seq: int, status: int, data: dict[str, Any]) -> dict[str, Any]:
        return seal(session.s2c, wire.dumps(data), wire.response_ad(lane, seq, status))

    # --- devices --------------------------------------------------------------------------------
    async def list_devices(self) -> list[DeviceInfo]:
        if not self.opened:
            await self.open()
        devices = await asyncio.to_thread(self.store.list)
        now = self.clock()
        return [
            DeviceInfo(d.id, d.name, d.created_at, d.last_seen, self.is_online(d.id))
            for d in devices
            if d.problem(now) is None
        ]

    async def revoke(self, device_id: str, reason: str = "removed on the desktop") -> bool:
        device = await self.device(device_id)
        changed = await asyncio.to_thread(self.store.revoke, device_id, self.clock(), reason)
        self._devices.pop(device_id, None)
        self._push(device_id, "revoked", {})
        self._end_device_activity(device_id, "the phone was removed")
        if changed:
            self.events.emit(CompanionEvent(EventKind.DEVICE_REVOKED, device_id, device.name if device else ""))
        return changed

    def _end_device_activity(self, device_id: str, reason: str) -> None:
        """Sessions, streams and every transfer in flight of this device end now."""
        self.sessions.end_device(device_id)
        for cutter in list(self._cutters):
            cutter(device_id)
        for q in self._streams.get(device_id, ()):
            q.put_nowait(None)
        self.outbox.cancel_device(device_id, reason)
        self.inbox.cancel_device(device_id, reason)

    async def expire(self, device_id: str, when: float | None = None) -> None:
        """End a device's pairing at ``when`` (default now) without revoking it (maintenance, tests)."""
        issued = (when if when is not None else self.clock()) - KEY_LIFETIME_S
        await asyncio.to_thread(self.store.set_issued, device_id, issued)
        self._devices.pop(device_id, None)
        self.sessions.end_device(device_id)

    # --- live stream to the phone ---------------------------------------------------------------
    def is_online(self, device_id: str) -> bool:
        return bool(self._streams.get(device_id))

    def open_stream(self, device_id: str) -> asyncio.Queue[StreamItem]:
        queue: asyncio.Queue[StreamItem] = asyncio.Queue()
        queues = self._streams.setdefault(device_id, set())
        queues.add(queue)
        if len(queues) == 1:
            self.emit(EventKind.DEVICE_ONLINE, device_id)
        return queue

    def close_stream(self, device_id: str, queue: asyncio.Queue[StreamItem]) -> None:
        queues = self._streams.get(device_id)
        if queues is None:
            return
        queues.discard(queue)
        if not queues:
            del self._streams[device_id]
            self.emit(EventKind.DEVICE_OFFLINE, device_id)

    def _push(self, device_id: str, kind: str, data: dict[str, Any]) -> None:
        for q in self._streams.get(device_id, ()):
            q.put_nowait((kind, data))

    def push(self, device_id: str, kind: str, data: dict[str, Any]) -> None:
        self._push(device_id, kind, data)

    async def snapshot(self, device_id: str) -> dict[str, Any]:
        device = await self.device(device_id)
        return {
            "device": {"id": device_id, "name": device.name if device else ""},
            "desktop": self.desktop_name,
            "offers": self.outbox.public_offers(device_id),
            "uploads": self.inbox.public_uploads(device_id),
        }

    # --- the two directions (the bridge protocol and what tools call) -----------------------------
    async def send_files(self, paths: Sequence[Path], *, device_id: str) -> Any:
        return await self.outbox.send_files(paths, device_id=device_id)

    def cancel(self, session_id: str, reason: str = "cancelled on the desktop") -> bool:
        return self.outbox.cancel(session_id, reason) or self.inbox.cancel(session_id, reason)
