"""The phone-facing HTTP API (aiohttp). Glue only: state and rules live in :mod:`.service`.

Routes (everything under /api/v1 except ``pair`` needs a device token: ``Authorization: Bearer``, or the
``weclaw_device`` cookie for the two GETs a browser makes without script headers, ``events`` and
``download``):

    GET  /  /app.js  /app.css  /sha256.js     the phone page (fixed list; no directory listing)
    POST /api/v1/pair                          one-time code -> device token (rate-limited)
    GET  /api/v1/me                            who am I; refreshes the cookie
    GET  /api/v1/events                        server-sent events: hello, offer, cancel, state, revoked
    GET  /api/v1/offers                        pending offers with per-file tokens
    GET  /api/v1/download?session&file&token   a file, with HTTP Range
    POST /api/v1/ack                           the phone's SHA-256 of a downloaded file
    POST /api/v1/upload/prepare                declare files -> session and a token per file
    POST /api/v1/upload?session&file&token     raw body of one file
    POST /api/v1/cancel                        cancel a session (either direction)
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from aiohttp import web

from weclaw_desktop.companion.devices import DEVICE_TTL_S, AuthProblem, Device
from weclaw_desktop.companion.transfers import (
    ID_PATTERN,
    SHA_PATTERN,
    FileState,
    IncomingFile,
    guess_mime,
    open_partial,
    safe_name,
    unique_destination,
)

if TYPE_CHECKING:
    from weclaw_desktop.companion.service import CompanionService

log = logging.getLogger("weclaw.companion.http")

COOKIE = "weclaw_device"
MAX_JSON_BODY = 64 * 1024
MAX_FILES_PER_SESSION = 500
WRITE_CHUNK = 4 << 20
HEARTBEAT_S = 15.0
STATIC = {
    "/": ("index.html", "text/html"),
    "/app.js": ("app.js", "text/javascript"),
    "/app.css": ("app.css", "text/css"),
    "/sha256.js": ("sha256.js", "text/javascript"),
}
_COOKIE_GETS = {"/api/v1/events", "/api/v1/download"}
CSP = (
    "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'"
)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
SERVICE: web.AppKey[CompanionService] = web.AppKey("service")
#: aiohttp >= 3.12 prefers typed request keys; older versions take a plain string.
DEVICE: Any = web.RequestKey("device", Device) if hasattr(web, "RequestKey") else "device"


def error(status: int, message: str, code: str = "", **headers: str) -> web.Response:
    body = {"error": message, "code": code or str(status)}
    return web.json_response(body, status=status, headers=headers or None)


@web.middleware
async def security_headers(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        resp = await handler(request)
    except web.HTTPException as exc:
        if exc.status == 413:
            resp = error(413, "The request body is too large.", "too_large")
        elif exc.status >= 400:
            resp = error(exc.status, exc.reason, str(exc.status))
        else:
            raise
    if not resp.prepared:
        h = resp.headers
        h["X-Content-Type-Options"] = "nosniff"
        h["X-Frame-Options"] = "DENY"
        h["Referrer-Policy"] = "no-referrer"
        h.setdefault("Cache-Control", "no-store")
        if request.path in STATIC:
            h["Content-Security-Policy"] = CSP
    return resp


@web.middleware
async def authenticate(request: web.Request, handler: Handler) -> web.StreamResponse:
    if not request.path.startswith("/api/") or request.path == "/api/v1/pair":
        return await handler(request)
    service = request.app[SERVICE]
    token = ""
    auth = request.headers.get("Authorization", "")
    if auth.startswith("Bearer "):
        token = auth[7:].strip()
    elif request.method == "GET" and request.path in _COOKIE_GETS:
        token = request.cookies.get(COOKIE, "")
    if not token:
        return error(401, "This phone is not paired. Scan the QR code in the desktop app (Phone button).", "missing")
    found = await service.authenticate(token)
    if isinstance(found, AuthProblem):
        messages = {
            AuthProblem.REVOKED: "This phone was removed on the desktop. Scan a new QR code to pair again.",
            AuthProblem.EXPIRED: "This pairing has expired. Scan a new QR code to pair again.",
            AuthProblem.UNKNOWN: "This phone is not paired with this desktop. Scan the QR code to pair.",
            AuthProblem.MISSING: "This phone is not paired.",
        }
        return error(401, messages[found], found.value)
    request[DEVICE] = found
    return await handler(request)


async def read_json(request: web.Request) -> dict[str, Any]:
    if request.content_length is not None and request.content_length > MAX_JSON_BODY:
        raise web.HTTPRequestEntityTooLarge(max_size=MAX_JSON_BODY, actual_size=request.content_length)
    raw = await request.read()  # bounded by client_max_size
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        raise web.HTTPBadRequest(reason="The body must be JSON.") from None
    if not isinstance(data, dict):
        raise web.HTTPBadRequest(reason="The body must be a JSON object.")
    return data


def device_of(request: web.Request) -> Device:
    device: Device = request[DEVICE]
    return device


# --- static page ----------------------------------------------------------------------------------


async def static_page(request: web.Request) -> web.StreamResponse:
    name, ctype = STATIC[request.path]
    path = request.app[SERVICE].static_dir / name
    if not path.is_file():
        return error(500, f"the phone page is missing from this installation ({name})", "missing_resource")
    return web.FileResponse(path, headers={"Content-Type": f"{ctype}; charset=utf-8", "Cache-Control": "no-cache"})


# --- pairing and session ----------------------------------------------------------------------------


async def pair(request: web.Request) -> web.StreamResponse:
    service = request.app[SERVICE]
    remote = request.remote or "?"
    allowed, retry = service.pair_attempt_allowed(remote)
    if not allowed:
        return error(
            429,
            "Too many pairing attempts. Wait a minute and try again.",
            "rate_limited",
            **{"Retry-After": str(max(1, int(retry + 0.999)))},
        )
    body = await read_json(request)
    token, name = body.get("token"), body.get("name")
    if not isinstance(token, str) or not token or len(token) > 200:
        return error(400, "Missing pairing code. Open the link from the QR code again.", "bad_request")
    name = safe_name(str(name or ""), "Phone")[:64]
    result = await service.pair(token, name, request.headers.get("User-Agent", ""), remote)
    if isinstance(result, str):
        status = 401 if result == "invalid" else 403
        messages = {
            "invalid": "This pairing code is wrong, already used or expired. Show a new QR code on the desktop.",
            "declined": "The desktop did not accept this phone.",
            "timeout": "Nobody confirmed on the desktop in time. Scan a new QR code and confirm there.",
        }
        return error(status, messages[result], result)
    device, device_token = result
    resp = web.json_response(
        {"device": {"id": device.id, "name": device.name}, "token": device_token, "desktop": service.desktop_name}
    )
    set_cookie(resp, device_token)
    return resp


def set_cookie(resp: web.StreamResponse, token: str) -> None:
    resp.set_cookie(COOKIE, token, max_age=DEVICE_TTL_S, httponly=True, samesite="Strict", path="/api/v1/")


async def me(request: web.Request) -> web.StreamResponse:
    device = device_of(request)
    resp = web.json_response(
        {"device": {"id": device.id, "name": device.name}, "desktop": request.app[SERVICE].desktop_name}
    )
    auth = request.headers.get("Authorization", "")
    if auth.startswith("Bearer "):
        set_cookie(resp, auth[7:].strip())
    return resp


async def events(request: web.Request) -> web.StreamResponse:
    service = request.app[SERVICE]
    device = device_of(request)
    resp = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-store",
            "X-Accel-Buffering": "no",
            "X-Content-Type-Options": "nosniff",
        }
    )
    await resp.prepare(request)
    queue = service.open_stream(device)
    try:
        await resp.write(b"retry: 2000\n\n")
        await resp.write(sse("hello", service.snapshot(device)))
        while True:
            try:
                item = await asyncio.wait_for(queue.get(), HEARTBEAT_S)
            except TimeoutError:
                await resp.write(b"event: ping\ndata: {}\n\n")  # a comment would not reach the page's watchdog
                continue
            if item is None:
                break
            await resp.write(sse(*item))
            if item[0] == "revoked":
                break
    except (ConnectionError, RuntimeError):  # the phone went away (aiohttp raises RuntimeError on closed writers)
        pass
    finally:
        service.close_stream(device, queue)
    return resp


def sse(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


async def offers(request: web.Request) -> web.StreamResponse:
    return web.json_response(request.app[SERVICE].snapshot(device_of(request)))


# --- desktop -> phone -------------------------------------------------------------------------------


async def download(request: web.Request) -> web.StreamResponse:
    service = request.app[SERVICE]
    q = request.query
    found = service.outgoing_file(device_of(request), q.get("session", ""), q.get("file", ""), q.get("token", ""))
    if isinstance(found, web.Response):
        return found
    transfer, f = found
    try:
        st = await asyncio.to_thread(f.path.stat)
    except OSError:
        st = None
    if st is None or st.st_size != f.size or st.st_mtime_ns != f.mtime_ns:
        service.file_failed(transfer, f, "the file changed or was removed on the desktop after it was offered")
        return error(410, "The file changed on the desktop after it was offered. Ask for it again.", "gone")
    if f.state is FileState.QUEUED:
        f.state = FileState.SENDING
    headers = {
        "Content-Type": f.mime,
        "Content-Disposition": f"attachment; filename*=UTF-8''{quote(f.name, safe='')}",
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
    }
    verify = "X-WeClaw-Verify" in request.headers

    def finished(resp: web.FileResponse) -> None:
        transport = request.transport
        if transport is None or transport.is_closing() or request.method == "HEAD":
            return  # the phone went away mid-way (it resumes with Range), or nothing was sent
        end = f.size
        if resp.status == 206:
            rng = resp.headers.get("Content-Range", "")  # bytes a-b/size
            with contextlib.suppress(ValueError, IndexError):
                end = int(rng.split(" ")[1].split("/")[0].split("-")[1]) + 1
        elif resp.status != 200:
            return
        service.file_progress(transfer, f, end, whole=resp.status == 200 and not verify)

    return TrackedFileResponse(f.path, finished, chunk_size=256 * 1024, headers=headers)


class TrackedFileResponse(web.FileResponse):
    """aiohttp's file response (Range, If-Range, sendfile) that reports when the body has been sent."""

    def __init__(self, path: Path, on_sent: Callable[[web.FileResponse], None], **kwargs: Any) -> None:
        super().__init__(path, **kwargs)
        self._on_sent = on_sent

    async def prepare(self, request: web.BaseRequest) -> Any:
        result = await super().prepare(request)
        self._on_sent(self)
        return result


async def ack(request: web.Request) -> web.StreamResponse:
    service = request.app[SERVICE]
    body = await read_json(request)
    found = service.outgoing_file(
        device_of(request),
        str(body.get("session", "")),
        str(body.get("file", "")),
        str(body.get("token", "")),
        allow_final=True,
    )
    if isinstance(found, web.Response):
        return found
    transfer, f = found
    digest = str(body.get("sha256", "")).lower()
    problem = str(body.get("error", ""))[:300]
    if not problem and not SHA_PATTERN.match(digest):
        return error(400, "sha256 must be 64 lowercase hex digits.", "bad_request")
    state = service.acknowledge(transfer, f, digest, problem)
    return web.json_response({"state": state.value, "sha256": f.sha256})


# --- phone -> desktop -------------------------------------------------------------------------------


async def prepare_upload(request: web.Request) -> web.StreamResponse:
    service = request.app[SERVICE]
    body = await read_json(request)
    items = body.get("files")
    if not isinstance(items, list) or not items:
        return error(400, "files must be a non-empty list.", "bad_request")
    if len(items) > MAX_FILES_PER_SESSION:
        return error(413, f"At most {MAX_FILES_PER_SESSION} files at a time.", "too_many")
    limit = service.max_upload_bytes
    files: dict[str, IncomingFile] = {}
    for item in items:
        if not isinstance(item, dict):
            return error(400, "Each file must be an object.", "bad_request")
        fid, size, digest = item.get("id"), item.get("size"), str(item.get("sha256") or "").lower()
        if not isinstance(fid, str) or not ID_PATTERN.match(fid) or fid in files:
            return error(400, "File ids must be unique and use only letters, digits, '-' and '_'.", "bad_id")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            return error(400, "size must be a whole number of bytes.", "bad_request")
        if size > limit:
            return error(
                413, f"{item.get('name', 'A file')} is larger than the limit of {limit // (1 << 20)} MB.", "too_large"
            )
        if digest and not SHA_PATTERN.match(digest):
            return error(400, "sha256 must be 64 hex digits.", "bad_request")
        name = safe_name(str(item.get("name") or ""), fid)
        mime = str(item.get("mime") or guess_mime(name))[:100]
        files[fid] = IncomingFile(id=fid, name=name, size=size, sha256=digest, mime=mime)
    result = await service.prepare_upload(device_of(request), files)
    if isinstance(result, web.Response):
        return result
    return web.json_response({"session": result.id, "files": {f.id: f.token for f in result.files.values()}})


async def upload(request: web.Request) -> web.StreamResponse:
    service = request.app[SERVICE]
    q = request.query
    found = service.incoming_file(device_of(request), q.get("session", ""), q.get("file", ""), q.get("token", ""))
    if isinstance(found, web.Response):
        return found
    session, f = found
    if f.busy or f.state.final:
        return error(409, "This file is already being uploaded or done.", "conflict")
    length = request.content_length
    if length is not None and length != f.size:
        return error(
            400 if length < f.size else 413,
            "The body length differs from the size declared in prepare.",
            "size_mismatch",
        )
    f.busy = True
    incoming = service.incoming_dir
    part, fd = await asyncio.to_thread(open_partial, incoming)
    digest = hashlib.sha256()
    received = 0
    done = False
    buf = bytearray()
    try:
        async for chunk in request.content.iter_chunked(1 << 20):
            received += len(chunk)
            if received > f.size:
                return error(413, "The upload is longer than the size declared in prepare.", "size_mismatch")
            buf += chunk
            if len(buf) >= WRITE_CHUNK:
                await asyncio.to_thread(_write, fd, digest, bytes(buf))
                buf.clear()
        if buf:
            await asyncio.to_thread(_write, fd, digest, bytes(buf))
        if received != f.size:
            return error(400, f"The upload ended early ({received} of {f.size} bytes). Send it again.", "incomplete")
        got = digest.hexdigest()
        if f.sha256 and got != f.sha256:
            f.state = FileState.FAILED
            service.upload_failed(session, f, "SHA-256 mismatch")
            return error(422, "The file arrived damaged (SHA-256 differs). Send it again.", "sha_mismatch")
        dest = await asyncio.to_thread(_commit, fd, part, incoming, f.name)
        fd = -1
        done = True
    finally:
        f.busy = False
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)
        if not done:
            with contextlib.suppress(OSError):
                part.unlink()
    f.received_sha256 = got
    f.saved_as = dest
    f.state = FileState.DELIVERED
    service.upload_done(session, f)
    return web.json_response(
        {"file": f.id, "name": dest.name, "size": received, "sha256": got, "verified": bool(f.sha256)}
    )


def _write(fd: int, digest: Any, data: bytes) -> None:
    digest.update(data)
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _commit(fd: int, part: Path, incoming: Path, name: str) -> Path:
    """fsync, close, and move into the incoming folder without overwriting anything."""
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    for _ in range(20):
        dest = unique_destination(incoming, name)
        try:
            os.link(part, dest)  # fails if dest appeared meanwhile: never overwrites
        except FileExistsError:
            continue
        except OSError:  # file systems without hard links (FAT): rename
            os.replace(part, dest)
            return dest
        part.unlink()
        return dest
    raise OSError("could not find a free name in the incoming folder")


async def cancel(request: web.Request) -> web.StreamResponse:
    body = await read_json(request)
    ok = request.app[SERVICE].cancel_from_phone(device_of(request), str(body.get("session", "")))
    return web.json_response({"cancelled": ok}) if ok else error(404, "No such session.", "not_found")


async def _no_content(request: web.Request) -> web.Response:
    return web.Response(status=204)


def build_app(service: CompanionService) -> web.Application:
    app = web.Application(client_max_size=MAX_JSON_BODY, middlewares=[security_headers, authenticate])
    app[SERVICE] = service
    for path in STATIC:
        app.router.add_get(path, static_page)
    app.router.add_get("/favicon.ico", _no_content)
    app.router.add_post("/api/v1/pair", pair)
    app.router.add_get("/api/v1/me", me)
    app.router.add_get("/api/v1/events", events)
    app.router.add_get("/api/v1/offers", offers)
    app.router.add_get("/api/v1/download", download)
    app.router.add_post("/api/v1/ack", ack)
    app.router.add_post("/api/v1/upload/prepare", prepare_upload)
    app.router.add_post("/api/v1/upload", upload)
    app.router.add_post("/api/v1/cancel", cancel)
    return app
