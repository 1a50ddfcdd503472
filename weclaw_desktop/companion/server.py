"""The phone link's HTTP face (aiohttp): routes, the request rules that are about HTTP (Host, Origin, content
type, body timeouts, connection caps), Problem -> status mapping, and :class:`HttpServer`, the runner.
State and rules live in :mod:`.service`; bodies are sealed and opened with :mod:`.crypto`.

    GET  /  /app.js ... /vendor/...            the phone page (a fixed list; no directory listing)
    POST /api/v1/pair                          proof of the QR secret -> device key, sealed (JSON, own Origin)
    POST /api/v1/hello                         a session challenge
    POST /api/v1/session                       HMAC(device key, challenge) -> a session
    -- signed (X-WeClaw-Auth), bodies and answers sealed with the session's keys --
    POST /api/v1/state                         offers and uploads of this phone
    GET  /api/v1/events                        sealed frames: hello, offer, cancel, state, revoked, ping
    GET  /api/v1/download?o&f&from             sealed records of one offered file from record ``from``
    POST /api/v1/ack                           ready / saved / failed for one file
    POST /api/v1/upload/prepare                declare files -> an upload and a key per file
    POST /api/v1/upload/status                 how many records the desktop has of each file
    POST /api/v1/upload?u&f&from               sealed records of one file from record ``from``
    POST /api/v1/cancel                        end an offer or upload
    POST /api/v1/unpair                        this phone leaves (its pairing ends on the desktop)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from weclaw_desktop.companion import wire
from weclaw_desktop.companion.crypto import (
    RECORD,
    SALT,
    TAG,
    CryptoError,
    FrameSealer,
    RecordSealer,
    b64e,
    digest,
    record_len,
)
from weclaw_desktop.companion.problems import Kind, Problem
from weclaw_desktop.companion.service import CompanionCore
from weclaw_desktop.companion.sessions import Session

log = logging.getLogger("weclaw.companion.http")

HEARTBEAT_S = 15.0
POLL_S = 0.5  # how often an idle event stream checks that the phone is still there
BATCH = 8  # records read and sealed per step of a download
MAX_UPLOAD_RECORDS = 16  # records in one upload request
STATUS = {
    Kind.BAD_REQUEST: 400,
    Kind.UNAUTHENTICATED: 401,
    Kind.FORBIDDEN: 403,
    Kind.NOT_FOUND: 404,
    Kind.CONFLICT: 409,
    Kind.GONE: 410,
    Kind.TOO_LARGE: 413,
    Kind.UNSUPPORTED: 415,
    Kind.MISDIRECTED: 421,
    Kind.RATE_LIMITED: 429,
    Kind.NO_SPACE: 507,
    Kind.UNAVAILABLE: 503,
}
PAGE = {
    "/": ("index.html", "text/html"),
    "/app.js": ("app.js", "text/javascript"),
    "/proto.js": ("proto.js", "text/javascript"),
    "/store.js": ("store.js", "text/javascript"),
    "/zip.js": ("zip.js", "text/javascript"),
    "/i18n.js": ("i18n.js", "text/javascript"),
    "/app.css": ("app.css", "text/css"),
}
CSP = (
    "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'"
)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
CORE: web.AppKey[CompanionCore] = web.AppKey("core")
CAPS: web.AppKey[ConnectionCaps] = web.AppKey("caps")
FILES: web.AppKey[dict[str, tuple[Path, str]]] = web.AppKey("files")
INFLIGHT: web.AppKey[dict[str, dict[int, web.Request]]] = web.AppKey("inflight")  # device -> requests
#: aiohttp >= 3.12 prefers typed request keys; older versions take a plain string.
AUTH: Any = web.RequestKey("auth", tuple) if hasattr(web, "RequestKey") else "auth"


def vendor_files(static_dir: Path) -> dict[str, tuple[Path, str]]:
    """The vendored libraries the page imports, from their manifest (only files listed there are served)."""
    manifest = static_dir / "vendor" / "VENDORED.json"
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    out: dict[str, tuple[Path, str]] = {}
    for package in data.get("packages", []):
        for name in package.get("files", {}):
            rel = f"vendor/{package['dir']}/{name}"
            ctype = "text/javascript" if name.endswith(".js") else "text/plain"
            out["/" + rel] = (static_dir / rel, ctype)
    return out


def plain(status: int, body: dict[str, Any], **headers: str) -> web.Response:
    return web.json_response(body, status=status, headers=headers or None)


def problem_response(request: web.Request, p: Problem) -> web.Response:
    status = STATUS[p.kind]
    headers = {"Retry-After": str(max(1, int(p.retry_after + 0.999)))} if p.retry_after else {}
    auth = request.get(AUTH)
    if auth is not None:  # signed request: the answer is sealed, so the page can trust it
        session, lane, seq = auth
        return plain(status, request.app[CORE].seal_response(session, lane, seq, status, p.body()), **headers)
    return plain(status, p.body(), **headers)


@web.middleware
async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Host must be the advertised address (no DNS rebinding); a foreign Origin never reaches the API."""
    core = request.app[CORE]
    try:
        if request.headers.get("Host", "") != core.authority:
            raise Problem("bad_host", "This address is not the phone link's address.")
        origin = request.headers.get("Origin")
        if origin is not None and origin != core.base_url and request.path.startswith("/api/"):
            raise Problem("bad_origin", "Requests from other web pages are refused.")
        resp = await handler(request)
    except Problem as p:
        resp = problem_response(request, p)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code = {404: "not_found", 405: "bad_request", 413: "too_large"}.get(exc.status, "bad_request")
        resp = plain(exc.status, {"error": exc.reason, "code": code})
    except (ConnectionError, asyncio.CancelledError):
        raise
    except Exception:
        log.exception("phone link: %s %s failed", request.method, request.path)
        resp = plain(500, {"error": "Something went wrong on the desktop.", "code": "internal"})
    if not resp.prepared:
        h = resp.headers
        h["X-Content-Type-Options"] = "nosniff"
        h["X-Frame-Options"] = "DENY"
        h["Referrer-Policy"] = "no-referrer"
        h.setdefault("Cache-Control", "no-store")
        if request.path in PAGE:
            h["Content-Security-Policy"] = CSP
    return resp


# --- bodies ----------------------------------------------------------------------------------------


async def read_body(request: web.Request, limit: int) -> bytes:
    """The whole body, at most ``limit`` bytes; one that stalls is dropped with the connection."""
    if request.content_length is not None and request.content_length > limit:
        raise Problem("too_large", f"The request body is larger than {limit // 1024} KB.")
    idle = request.app[CORE].limits.body_idle_s
    buf = bytearray()
    while True:
        try:
            chunk = await asyncio.wait_for(request.content.read(65536), idle)
        except TimeoutError:
            drop(request)
            raise Problem("slow", "The request body stopped arriving.") from None
        if not chunk:
            return bytes(buf)
        buf += chunk
        if len(buf) > limit:
            raise Problem("too_large", f"The request body is larger than {limit // 1024} KB.")


async def read_exactly(request: web.Request, n: int) -> bytes:
    idle = request.app[CORE].limits.body_idle_s
    try:
        return await asyncio.wait_for(request.content.readexactly(n), idle)
    except TimeoutError:
        drop(request)
        raise Problem("slow", "The request body stopped arriving.") from None
    except asyncio.IncompleteReadError as exc:
        if exc.partial:
            raise Problem("size_mismatch", "The body ended inside a record.") from None
        return b""


def drop(request: web.Request) -> None:
    if request.transport is not None:
        request.transport.abort()


def require_json(request: web.Request) -> None:
    if request.content_type != "application/json":
        raise Problem("unsupported_type", "The body must be JSON (Content-Type: application/json).")


async def json_body(request: web.Request) -> dict[str, Any]:
    require_json(request)
    return wire.parse_json_object(await read_body(request, wire.MAX_JSON))


# --- signed requests -----------------------------------------------------------------------------------


class Signed:
    """One authenticated request: its session, lane and sequence number; counted against its device."""

    def __init__(self, request: web.Request, session: Session, lane: str, seq: int) -> None:
        self.request = request
        self.session = session
        self.lane = lane
        self.seq = seq
        self.core = request.app[CORE]
        inflight = request.app[INFLIGHT].setdefault(session.device_id, {})
        if len(inflight) >= self.core.limits.requests_per_device:
            raise Problem("busy", "This phone has too many requests open. Wait a moment.", retry_after=1)
        inflight[id(request)] = request
        request[AUTH] = (session, lane, seq)
        request.app[CAPS].protect(request.transport)

    @property
    def device_id(self) -> str:
        return self.session.device_id

    def release(self) -> None:
        inflight = self.request.app[INFLIGHT].get(self.device_id)
        if inflight is not None:
            inflight.pop(id(self.request), None)
            if not inflight:
                self.request.app[INFLIGHT].pop(self.device_id, None)

    def answer(self, data: dict[str, Any], status: int = 200) -> web.Response:
        return plain(status, self.core.seal_response(self.session, self.lane, self.seq, status, data))

    def body(self, raw: bytes) -> dict[str, Any]:
        return self.core.open_request(
            self.session, self.request.method, self.request.raw_path, self.lane, self.seq, raw
        )


async def signed(request: web.Request, body_digest: str) -> Signed:
    core = request.app[CORE]
    session, lane, seq = await core.authenticate(
        request.headers.get(wire.AUTH_HEADER, ""), request.method, request.raw_path, body_digest
    )
    return Signed(request, session, lane, seq)


def control(
    fn: Callable[[Signed, dict[str, Any]], Awaitable[dict[str, Any]]],
) -> Handler:
    """A signed JSON call on the ``ctl`` lane: sealed body in, sealed answer out."""

    async def handler(request: web.Request) -> web.StreamResponse:
        require_json(request)
        raw = await read_body(request, wire.MAX_JSON)
        s = await signed(request, digest(raw))
        try:
            return s.answer(await fn(s, s.body(raw)))
        finally:
            s.release()

    return handler


# --- page and pairing -----------------------------------------------------------------------------------


async def static_page(request: web.Request) -> web.StreamResponse:
    found = request.app[FILES].get(request.path)
    if found is None:
        raise Problem("not_found", "No such page.")
    path, ctype = found
    if not path.is_file():
        return plain(
            500, {"error": f"the phone page is missing from this installation ({path.name})", "code": "internal"}
        )
    return web.FileResponse(path, headers={"Content-Type": f"{ctype}; charset=utf-8", "Cache-Control": "no-cache"})


async def pair(request: web.Request) -> web.StreamResponse:
    core = request.app[CORE]
    source = request.remote or "?"
    require_json(request)
    if request.headers.get("Origin") != core.base_url:
        raise Problem("bad_origin", "Pairing works only from the phone page itself.")
    core.pair_blocked(source)
    body = wire.parse_json_object(await read_body(request, wire.MAX_JSON))
    caps = request.app[CAPS]
    answer = await core.pair(
        body, request.headers.get("User-Agent", ""), source, proven=lambda: caps.protect(request.transport)
    )
    return plain(200, answer)


async def hello(request: web.Request) -> web.StreamResponse:
    await json_body(request)
    return plain(200, request.app[CORE].hello(request.remote or "?"))


async def open_session(request: web.Request) -> web.StreamResponse:
    return plain(200, await request.app[CORE].open_session(await json_body(request)))


# --- signed control calls ---------------------------------------------------------------------------


async def state(s: Signed, body: dict[str, Any]) -> dict[str, Any]:
    return await s.core.snapshot(s.device_id)


async def ack(s: Signed, body: dict[str, Any]) -> dict[str, Any]:
    """One report ({offer, file, state, reason}) or several ({items: [...]}, one tap saved them as a ZIP)."""
    items = body.get("items", [body])
    if not isinstance(items, list) or not 0 < len(items) <= 500 or not all(isinstance(i, dict) for i in items):
        raise Problem("bad_request", "items must be a list of 1 to 500 reports.")
    states: dict[str, str] = {}
    for item in items:
        offer, file_id = wire.ident(item, "offer"), wire.ident(item, "file")
        st = await s.core.outbox.acknowledge(
            s.device_id,
            offer,
            file_id,
            wire.text(item, "state", limit=10),
            wire.text(item, "reason", limit=300, required=False),
        )
        states[f"{offer}/{file_id}"] = st.value
    return {"state": st.value, "states": states}


async def prepare_upload(s: Signed, body: dict[str, Any]) -> dict[str, Any]:
    return await s.core.inbox.prepare(s.device_id, body)


async def upload_status(s: Signed, body: dict[str, Any]) -> dict[str, Any]:
    return s.core.inbox.status(s.device_id, wire.ident(body, "upload"))


async def cancel(s: Signed, body: dict[str, Any]) -> dict[str, Any]:
    target = wire.ident(body, "id")
    outbox_t = s.core.outbox.offers.get(target)
    if outbox_t is not None and outbox_t.device_id == s.device_id:
        s.core.outbox.cancel(target, "declined on the phone")
        return {"cancelled": True}
    if s.core.inbox.cancel_from_phone(s.device_id, target):
        return {"cancelled": True}
    raise Problem("not_found", "No such transfer.")


async def unpair(s: Signed, body: dict[str, Any]) -> dict[str, Any]:
    s.release()  # every other request of this phone is cut; this one gets its answer
    await s.core.revoke(s.device_id, "unpaired on the phone")
    return {"unpaired": True}


# --- streams ----------------------------------------------------------------------------------------


async def events(request: web.Request) -> web.StreamResponse:
    s = await signed(request, digest(b""))
    core = s.core
    try:
        resp = web.StreamResponse(headers={"Content-Type": "application/octet-stream", "Cache-Control": "no-store"})
        await resp.prepare(request)
        sealer = FrameSealer(s.session.s2c, str(s.seq))
        queue = core.open_stream(s.device_id)
        try:
            await resp.write(sealer.salt)
            await resp.write(sealer.seal(wire.dumps({"kind": "hello", "data": await core.snapshot(s.device_id)})))
            quiet = 0.0
            while True:
                try:
                    item = await asyncio.wait_for(queue.get(), POLL_S)
                except TimeoutError:
                    if request.transport is None or request.transport.is_closing():
                        break  # the phone went away: it is offline now, not at the next heartbeat
                    quiet += POLL_S
                    if quiet < HEARTBEAT_S:
                        continue
                    item = ("ping", {})
                quiet = 0.0
                if item is None:
                    break
                await resp.write(sealer.seal(wire.dumps({"kind": item[0], "data": item[1]})))
                if item[0] == "revoked":
                    break
        except (ConnectionError, RuntimeError):  # the phone went away (aiohttp raises RuntimeError on closed writers)
            pass
        finally:
            core.close_stream(s.device_id, queue)
        return resp
    finally:
        s.release()


def _query_int(request: web.Request, name: str) -> int:
    raw = request.query.get(name, "")
    if not raw.isdigit() or len(raw) > 12:
        raise Problem("bad_request", f"'{name}' must be a whole number.")
    return int(raw)


async def download(request: web.Request) -> web.StreamResponse:
    s = await signed(request, digest(b""))
    core = s.core
    try:
        q = request.query
        t, f = core.outbox.find(s.device_id, q.get("o", ""), q.get("f", ""))
        if s.lane != f"dl:{f.id}":
            raise Problem("bad_request", "A download goes on its own lane.")
        first = _query_int(request, "from")
        if first > f.records:
            raise Problem("bad_request", "'from' is past the last record.")
        await core.outbox.check_unchanged(t, f)
        sealer = RecordSealer(core.outbox.file_key(t, f), f.id, f.size)
        reader = await asyncio.to_thread(_FileRecords, f.path, f.size, f.mtime_ns)
        try:
            resp = web.StreamResponse(headers={"Content-Type": "application/octet-stream", "Cache-Control": "no-store"})
            resp.content_length = SALT + sum(record_len(f.size, i) + TAG for i in range(first, f.records))
            await resp.prepare(request)
            await resp.write(sealer.salt)
            # read and seal the next batch in a thread while this one is written (one batch ahead)
            ahead = asyncio.ensure_future(
                asyncio.to_thread(reader.sealed, sealer, first, min(f.records, first + BATCH))
            )
            index = first
            try:
                while index < f.records:
                    end = min(f.records, index + BATCH)
                    chunk = await ahead
                    if end < f.records:
                        nxt = min(f.records, end + BATCH)
                        ahead = asyncio.ensure_future(asyncio.to_thread(reader.sealed, sealer, end, nxt))
                    if chunk is None:
                        await core.outbox.fail(t, f, "the file changed on the desktop while it was being sent")
                        drop(request)
                        return resp
                    await core.outbox.served(t, f, end)
                    await resp.write(chunk)
                    index = end
            finally:
                if not ahead.done():
                    ahead.cancel()
                    with contextlib.suppress(BaseException):
                        await ahead
            await resp.write_eof()
            return resp
        finally:
            await asyncio.to_thread(reader.close)
    finally:
        s.release()


class _FileRecords:
    """An open file read record by record; stops if the file changes under it (never seals changed bytes)."""

    def __init__(self, path: Path, size: int, mtime_ns: int) -> None:
        self.fh = path.open("rb", buffering=0)
        self.size = size
        self.mtime_ns = mtime_ns
        self.plain = bytearray(RECORD)

    def sealed(self, sealer: RecordSealer, first: int, end: int) -> bytearray | None:
        """Records first..end-1 sealed into one new buffer (read into a reused one: no other copies)."""
        out = bytearray(sum(record_len(self.size, i) + TAG for i in range(first, end)))
        view = memoryview(out)
        self.fh.seek(first * RECORD)
        offset = 0
        for i in range(first, end):
            n = record_len(self.size, i)
            plain = memoryview(self.plain)[:n]
            if self.fh.readinto(plain) != n:
                return None
            sealer.seal_into(i, plain, view[offset : offset + n + TAG])
            offset += n + TAG
        st = os.fstat(self.fh.fileno())
        if (st.st_size, st.st_mtime_ns) != (self.size, self.mtime_ns):
            return None  # changed while being read: these bytes are not sent
        return out

    def close(self) -> None:
        self.fh.close()


async def upload(request: web.Request) -> web.StreamResponse:
    if request.content_type != "application/octet-stream":
        raise Problem("unsupported_type", "Records are sent as application/octet-stream.")
    salt = await read_exactly(request, SALT)
    if len(salt) != SALT:
        raise Problem("size_mismatch", "The body is too short.")
    s = await signed(request, "salt:" + b64e(salt))
    core = s.core
    try:
        q = request.query
        first = _query_int(request, "from")
        session, f = core.inbox.target(s.device_id, q.get("u", ""), q.get("f", ""), first)
        if s.lane != f"up:{f.id}":
            raise Problem("bad_request", "An upload goes on its own lane.")
        sealer = RecordSealer(core.inbox.file_key(session, f), f.id, f.size, salt)
        f.busy = True
        try:
            index, batch = first, []
            while index < f.records and index - first < MAX_UPLOAD_RECORDS:
                sealed = await read_exactly(request, record_len(f.size, index) + TAG)
                if not sealed:
                    break
                try:
                    batch.append(sealer.open(index, sealed))
                except CryptoError:
                    if batch:
                        await core.inbox.write(session, f, batch)
                    raise Problem("damaged", f"Record {index} did not authenticate; send it again.") from None
                index += 1
                if len(batch) == BATCH:
                    await core.inbox.write(session, f, batch)
                    batch = []
            if batch:
                await core.inbox.write(session, f, batch)
            if await request.content.read(1):
                raise Problem("size_mismatch", "The body is longer than its records.")
        finally:
            f.busy = False
        if f.received >= f.records:
            device = await core.device(s.device_id)
            return s.answer(await core.inbox.finish(session, f, device.name if device else ""))
        return s.answer({"file": f.id, "received": f.received, "done": False})
    finally:
        s.release()


# --- the app and its runner -----------------------------------------------------------------------------


async def _no_content(request: web.Request) -> web.Response:
    return web.Response(status=204)


def build_app(core: CompanionCore) -> web.Application:
    app = web.Application(client_max_size=wire.MAX_JSON, middlewares=[guard])
    app[CORE] = core
    app[FILES] = {p: (core.static_dir / name, ctype) for p, (name, ctype) in PAGE.items()} | vendor_files(
        core.static_dir
    )
    app[INFLIGHT] = {}
    app[CAPS] = ConnectionCaps(core.limits.connections_total, core.limits.connections_per_source, core.suspect)
    for path in app[FILES]:
        app.router.add_get(path, static_page)
    app.router.add_get("/favicon.ico", _no_content)
    app.router.add_post("/api/v1/pair", pair)
    app.router.add_post("/api/v1/hello", hello)
    app.router.add_post("/api/v1/session", open_session)
    app.router.add_post("/api/v1/state", control(state))
    app.router.add_get("/api/v1/events", events)
    app.router.add_get("/api/v1/download", download)
    app.router.add_post("/api/v1/ack", control(ack))
    app.router.add_post("/api/v1/upload/prepare", control(prepare_upload))
    app.router.add_post("/api/v1/upload/status", control(upload_status))
    app.router.add_post("/api/v1/upload", upload)
    app.router.add_post("/api/v1/cancel", control(cancel))
    app.router.add_post("/api/v1/unpair", control(unpair))
    return app


class ConnectionCaps:
    """At most ``total`` connections, ``per_source`` from one address. A connection that carried a request
    proven with a key (a pairing proof, a signed request) is protected; when the total is reached, a newcomer
    displaces an unprotected connection: first one of a host that sent wrong pairing proofs, else one of the
    host holding the most, oldest first. So a flood of junk can slow a phone down but not lock it out, and
    never cuts a transfer."""

    def __init__(self, total: int, per_source: int, suspect: Callable[[str], bool] = lambda source: False) -> None:
        self.total = total
        self.per_source = per_source
        self.suspect = suspect
        self.open: dict[str, list[asyncio.BaseTransport]] = {}
        self.protected: set[int] = set()
        self.order: dict[int, int] = {}
        self.admitted = 0

    def count(self) -> int:
        return sum(len(v) for v in self.open.values())

    def admit(self, source: str, transport: asyncio.BaseTransport) -> bool:
        mine = self.open.setdefault(source, [])
        if len(mine) >= self.per_source:
            return False
        if self.count() >= self.total:
            loose = [(k, t) for k, v in self.open.items() for t in v if id(t) not in self.protected]
            if not loose:
                return False
            # first hosts that sent wrong proofs, then the host holding the most, then the oldest connection
            heaviest, victim = min(
                loose, key=lambda kt: (not self.suspect(kt[0]), -len(self.open[kt[0]]), self.order[id(kt[1])])
            )
            self.release(heaviest, victim)
            victim.close()
        self.admitted += 1
        self.order[id(transport)] = self.admitted
        mine.append(transport)
        return True

    def protect(self, transport: asyncio.BaseTransport | None) -> None:
        if transport is not None:
            self.protected.add(id(transport))

    def release(self, source: str, transport: asyncio.BaseTransport) -> None:
        self.protected.discard(id(transport))
        self.order.pop(id(transport), None)
        mine = self.open.get(source)
        if mine is not None and transport in mine:
            mine.remove(transport)
        if not mine:
            self.open.pop(source, None)


class _Capped(asyncio.Protocol):
    """Wraps aiohttp's protocol for one connection: refused at once if over the caps."""

    def __init__(self, caps: ConnectionCaps, inner: Any) -> None:
        self.caps = caps
        self.inner: Any = inner
        self.source = ""
        self.transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        peer = transport.get_extra_info("peername")
        self.source = str(peer[0]) if peer else "?"
        self.transport = transport
        if not self.caps.admit(self.source, transport):
            self.inner = None
            transport.close()
            return
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.inner is not None:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received() if self.inner is not None else None

    def connection_lost(self, exc: Exception | None) -> None:
        if self.inner is not None:
            assert self.transport is not None
            self.caps.release(self.source, self.transport)
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()


class HttpServer:
    """Binds the app to one address; ``stop`` ends every connection."""

    def __init__(self, core: CompanionCore) -> None:
        self.core = core
        self.app = build_app(core)
        self.caps = self.app[CAPS]
        self._runner: web.AppRunner | None = None
        self._server: asyncio.Server | None = None
        self._detach: Callable[[], None] | None = None

    async def start(self, host: str, port: int) -> int:
        runner = web.AppRunner(
            self.app, access_log=None, shutdown_timeout=2.0, keepalive_timeout=self.core.limits.header_timeout_s
        )
        await runner.setup()
        assert runner.server is not None
        handler_factory = runner.server
        loop = asyncio.get_running_loop()
        try:
            server = await loop.create_server(lambda: _Capped(self.caps, handler_factory()), host, port)
        except OSError:
            await runner.cleanup()
            raise
        self._runner, self._server = runner, server
        self._detach = self.core.on_cut(self.cut)
        return int(server.sockets[0].getsockname()[1])

    def cut(self, device_id: str) -> None:
        """End every request of this device now (revoked or paired again): uploads and downloads stop."""
        for request in list(self.app[INFLIGHT].get(device_id, {}).values()):
            if request.path == "/api/v1/events":  # it sends 'revoked' and ends; cut it anyway if it hangs
                asyncio.get_running_loop().call_later(2.0, drop, request)
            else:
                drop(request)

    async def stop(self) -> None:
        server, self._server = self._server, None
        runner, self._runner = self._runner, None
        if self._detach is not None:
            self._detach()
            self._detach = None
        if server is not None:
            server.close()
        if runner is not None:
            await runner.cleanup()
        if server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2.0)
