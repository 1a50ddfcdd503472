"""What every HTTP handler of the phone link shares: app keys, Problem -> response (sealed once the request is
signed), bounded bodies with stall timeouts, and :class:`Signed`, one authenticated request counted against its
phone. Used by :mod:`.server` (routes, runner) and :mod:`.http_streams` (events and records)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from weclaw_desktop.companion import wire
from weclaw_desktop.companion.crypto import digest
from weclaw_desktop.companion.problems import Kind, Problem
from weclaw_desktop.companion.service import CompanionCore
from weclaw_desktop.companion.sessions import Session

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


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
CORE: web.AppKey[CompanionCore] = web.AppKey("core")
CAPS: web.AppKey[ConnectionCaps] = web.AppKey("caps")
FILES: web.AppKey[dict[str, tuple[Path, str]]] = web.AppKey("files")
INFLIGHT: web.AppKey[dict[str, dict[int, web.Request]]] = web.AppKey("inflight")  # device -> requests
#: aiohttp >= 3.12 prefers typed request keys; older versions take a plain string.
AUTH: Any = web.RequestKey("auth", tuple) if hasattr(web, "RequestKey") else "auth"


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
