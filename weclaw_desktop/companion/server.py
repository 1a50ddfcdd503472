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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from weclaw_desktop.companion import wire
from weclaw_desktop.companion.http_base import (
    CAPS,
    CORE,
    FILES,
    INFLIGHT,
    ConnectionCaps,
    Handler,
    Signed,
    control,
    drop,
    json_body,
    plain,
    problem_response,
    read_body,
    require_json,
)
from weclaw_desktop.companion.http_streams import download, events, upload
from weclaw_desktop.companion.problems import Problem
from weclaw_desktop.companion.service import CompanionCore

log = logging.getLogger("weclaw.companion.http")

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
