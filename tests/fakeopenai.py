"""A scripted fake OpenAI-compatible server for tests (aiohttp on 127.0.0.1, random port).

Each request to ``POST /v1/chat/completions`` takes the next :class:`Reply` from the script and plays it:
a streamed completion (text chunks, tool calls whose arguments are split across chunks, parallel tool
calls, a usage chunk, a finish_reason), an HTTP error (429 with Retry-After, 500, 401, 400), a stream
whose connection drops half-way, or a stream that hangs (for Stop tests). Every request body is kept in
:attr:`FakeOpenAI.requests`, so a test can assert which tools and messages were sent. ``GET /v1/models``
lists :attr:`FakeOpenAI.models`.

Chunk shapes follow ENGINEERING_NOTES.md "openai streaming". Use it directly::

    async with FakeOpenAI() as fake:
        fake.push(text_reply("Hello", " world"))
        fake.push(tool_reply(call("echo_say", {"text": "hi"}, split=3)))
        client = AsyncOpenAI(base_url=fake.base_url, api_key="sk-test")

or through the ``fake_openai`` fixture of ``tests/agent/conftest.py``. When the script is empty the server
answers 500 with "fake server: script exhausted", so a test that makes one request too many fails loudly;
unless :attr:`FakeOpenAI.responder` is set: then it computes the reply from the request body (a scripted
*model*, e.g. ``tests/safety``'s worst-case model that obeys instructions found in tool results).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import ssl
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Self

from aiohttp import web

ReplyKind = Literal["stream", "error", "drop", "hang"]

_ids = itertools.count(1)


@dataclass
class ToolCallSpec:
    """One tool call the fake model makes. ``arguments`` is sent as given when it is a string."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str = ""
    split: int = 1  # number of pieces the arguments string is split into

    @property
    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


def call(name: str, arguments: dict[str, Any] | str | None = None, *, id: str = "", split: int = 1) -> ToolCallSpec:
    return ToolCallSpec(name=name, arguments=arguments if arguments is not None else {}, id=id, split=split)


@dataclass
class Reply:
    kind: ReplyKind = "stream"
    chunks: list[dict[str, Any]] = field(default_factory=list)  # chunk bodies (without id/object/created/model)
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # pause between chunks
    after: int = 0  # drop/hang: how many chunks are sent first


def _pieces(text: str, n: int) -> list[str]:
    if n <= 1 or len(text) <= 1:
        return [text]
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _delta(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def stream_chunks(
    text: tuple[str, ...] | list[str] = (),
    calls: tuple[ToolCallSpec, ...] | list[ToolCallSpec] = (),
    *,
    usage: dict[str, int] | None = None,
    finish: str | None = None,
    interleave: bool = False,
) -> list[dict[str, Any]]:
    """The chunk bodies of one streamed completion."""
    chunks: list[dict[str, Any]] = [_delta({"role": "assistant", "content": ""})]
    chunks += [_delta({"content": piece}) for piece in text]
    per_call: list[list[dict[str, Any]]] = []
    for index, spec in enumerate(calls):
        call_id = spec.id or f"call_{next(_ids)}"
        pieces = _pieces(spec.arguments_text, spec.split)
        first = {
            "index": index,
            "id": call_id,
            "type": "function",
            "function": {"name": spec.name, "arguments": ""},
        }
        seq = [_delta({"tool_calls": [first]})]
        seq += [_delta({"tool_calls": [{"index": index, "function": {"arguments": p}}]}) for p in pieces]
        per_call.append(seq)
    if interleave:
        for group in itertools.zip_longest(*per_call):
            chunks += [c for c in group if c is not None]
    else:
        for seq in per_call:
            chunks += seq
    chunks.append(_delta({}, finish or ("tool_calls" if calls else "stop")))
    if usage is not None:
        chunks.append({"choices": [], "usage": usage})
    return chunks


def text_reply(*text: str, usage: dict[str, int] | None = None, delay_s: float = 0.0) -> Reply:
    """A plain answer streamed as the given pieces."""
    return Reply(chunks=stream_chunks(text, usage=usage), delay_s=delay_s)


def tool_reply(
    *calls: ToolCallSpec,
    text: tuple[str, ...] = (),
    usage: dict[str, int] | None = None,
    interleave: bool = False,
    delay_s: float = 0.0,
) -> Reply:
    """An answer that calls the given tools (several = parallel tool calls)."""
    return Reply(chunks=stream_chunks(text, calls, usage=usage, interleave=interleave), delay_s=delay_s)


def error_reply(status: int, message: str = "", *, retry_after: float | None = None, code: str = "") -> Reply:
    """An HTTP error with an OpenAI-shaped body (429 can carry Retry-After)."""
    headers = {}
    if retry_after is not None:
        headers["Retry-After"] = f"{retry_after:g}"
        headers["retry-after-ms"] = str(int(retry_after * 1000))
    body = {"error": {"message": message or f"fake error {status}", "type": "fake_error", "code": code or None}}
    return Reply(kind="error", status=status, body=body, headers=headers)


def drop_reply(*text: str, after: int | None = None) -> Reply:
    """Stream some text, then close the connection without finishing the response."""
    chunks = stream_chunks(text)
    return Reply(kind="drop", chunks=chunks, after=len(chunks) - 1 if after is None else after)


def hang_reply(*text: str) -> Reply:
    """Stream the text, then send nothing more until the client goes away (or the server stops)."""
    chunks = stream_chunks(text)
    return Reply(kind="hang", chunks=chunks, after=len(chunks) - 1)


class FakeOpenAI:
    """The server. ``await start()`` (or ``async with``) before use; :attr:`base_url` ends in ``/v1``."""

    def __init__(self, *, model: str = "fake-model", tls: ssl.SSLContext | None = None) -> None:
        """``tls``: a server context to serve https (see :func:`tls_pair`)."""
        self.model = model
        self.tls = tls
        self.script: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []  # JSON bodies, in order
        self.headers: list[dict[str, str]] = []  # request headers, same order
        self.models_headers: list[dict[str, str]] = []  # headers of GET /v1/models requests
        self.models: list[str] = [model, "fake-model-2"]
        self.responder: Callable[[dict[str, Any]], Reply] | None = None  # used when the script is empty
        self.models_status = 200
        self.disconnects = 0  # hang/drop replies whose client went away
        self.hanging = asyncio.Event()  # set when a hang reply is waiting
        self.started_streams = 0
        self._release = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.port = 0

    # --- script -----------------------------------------------------------------------------------
    def push(self, *replies: Reply) -> FakeOpenAI:
        self.script.extend(replies)
        return self

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/v1"

    def tool_names(self, request: int = -1) -> list[str]:
        """Function names sent in one request (default: the last)."""
        body = self.requests[request]
        return [t["function"]["name"] for t in body.get("tools") or []]

    def messages(self, request: int = -1) -> list[dict[str, Any]]:
        return list(self.requests[request]["messages"])

    # --- lifecycle --------------------------------------------------------------------------------
    def _add_routes(self, app: web.Application) -> None:
        """The endpoints served; a subclass adds its own after these."""
        app.router.add_post("/v1/chat/completions", self._completions)
        app.router.add_get("/v1/models", self._models)

    async def start(self) -> Self:
        app = web.Application()
        self._add_routes(app)
        self._runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self.tls)
        await site.start()
        server = site._server
        assert server is not None and server.sockets  # type: ignore[attr-defined]
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        return self

    async def stop(self) -> None:
        self._release.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeOpenAI:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # --- handlers ---------------------------------------------------------------------------------
    async def _models(self, request: web.Request) -> web.Response:
        self.models_headers.append(dict(request.headers))
        if self.models_status != 200:
            return web.json_response(
                {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}},
                status=self.models_status,
            )
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models]
        return web.json_response({"object": "list", "data": data})

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            return web.json_response({"error": {"message": "body is not JSON"}}, status=400)
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        if not self.script and self.responder is not None:
            reply = self.responder(body)
        elif not self.script:
            return web.json_response({"error": {"message": "fake server: script exhausted"}}, status=500)
        else:
            reply = self.script.popleft()
        if reply.kind == "error":
            return web.json_response(reply.body, status=reply.status, headers=reply.headers)
        if not body.get("stream"):
            return web.json_response(self._whole(reply))
        return await self._stream(request, reply)

    def _frame(self, chunk: dict[str, Any], chat_id: str) -> bytes:
        full = {
            "id": chat_id,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": self.model,
            **chunk,
        }
        return b"data: " + json.dumps(full, ensure_ascii=False).encode() + b"\n\n"

    async def _stream(self, request: web.Request, reply: Reply) -> web.StreamResponse:
        self.started_streams += 1
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        chat_id = f"chatcmpl-{next(_ids)}"
        limit = len(reply.chunks) if reply.kind == "stream" else reply.after
        try:
            for chunk in reply.chunks[:limit]:
                if reply.delay_s:
                    await asyncio.sleep(reply.delay_s)
                await resp.write(self._frame(chunk, chat_id))
            if reply.kind == "drop":
                self.disconnects += 1
                transport = request.transport
                if transport is not None:
                    transport.abort()  # no terminating chunk: the client sees an incomplete body
                return resp
            if reply.kind == "hang":
                self.hanging.set()
                while not self._release.is_set():
                    await resp.write(b": keep-alive\n\n")  # fails once the client has gone
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._release.wait(), 0.05)
                return resp
            await resp.write(b"data: [DONE]\n\n")
            await resp.write_eof()
        except ConnectionError:
            self.disconnects += 1
        except asyncio.CancelledError:
            self.disconnects += 1
            raise
        return resp

    def _whole(self, reply: Reply) -> dict[str, Any]:
        """A non-streamed completion assembled from the same chunks (for clients that do not stream)."""
        text = "".join(c["choices"][0]["delta"].get("content") or "" for c in reply.chunks if c.get("choices"))
        return {
            "id": f"chatcmpl-{next(_ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        }
