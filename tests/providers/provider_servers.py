"""Scripted OpenAI-compatible servers that enforce each provider's documented rule the way the real service does.

:class:`RuleServer` extends the shared fake (``tests/fakeopenai.py``): every request is first checked by the
server's *rule*; a request that breaks it gets the real service's error (status and body, word for word), and is
recorded in :attr:`RuleServer.rejections`. Otherwise the next scripted reply is played. Replies are built with
:func:`turn_reply`, which streams reasoning the way the provider does (a delta field, ``reasoning_details`` blocks,
or ``<think>`` tags inside ``content``) and can attach opaque fields to tool calls (Gemini thought signatures).

Rules (see each function): :func:`deepseek_rule`, :func:`kimi_rule`, :func:`gemini_rule`, :func:`openrouter_rule`,
:func:`strict_openai_rule`. Fault replies: :func:`silent_reply` (accepts the connection, never answers),
:func:`keepalive_reply` (headers, then only ``: keep-alive`` comments), :func:`truncated_reply` (stops without a
finish reason and without ``[DONE]``, closing the body normally), :func:`bad_json_reply` (an invalid chunk).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from fakeopenai import FakeOpenAI, Reply, ToolCallSpec

_ids = itertools.count(1000)

#: The message DeepSeek answers (HTTP 400) when reasoning of a tool-call turn is missing (api-docs.deepseek.com,
#: guides/thinking_mode; checked December 2026).
DEEPSEEK_MISSING = "The `reasoning_content` in the thinking mode must be passed back to the API."


@dataclass
class Rejection:
    status: int
    body: Any


Rule = Callable[["RuleServer", dict[str, Any]], Rejection | None]


# --- rules ------------------------------------------------------------------------------------------
def deepseek_rule(server: RuleServer, body: dict[str, Any]) -> Rejection | None:
    """DeepSeek thinking mode: every assistant message with tool calls must carry ``reasoning_content``."""
    for msg in body.get("messages") or []:
        if (
            msg.get("role") == "assistant"
            and msg.get("tool_calls")
            and not isinstance(msg.get("reasoning_content"), str)
        ):
            return Rejection(
                400,
                {
                    "error": {
                        "message": DEEPSEEK_MISSING,
                        "type": "invalid_request_error",
                        "param": None,
                        "code": "invalid_request_error",
                    }
                },
            )
    return None


def kimi_rule(server: RuleServer, body: dict[str, Any]) -> Rejection | None:
    """Moonshot with thinking on: tool-call messages need ``reasoning_content`` (the index is the message's)."""
    if (body.get("thinking") or {}).get("type") == "disabled":
        return None
    for i, msg in enumerate(body.get("messages") or []):
        if msg.get("role") == "assistant" and msg.get("tool_calls") and "reasoning_content" not in msg:
            text = f"thinking is enabled but reasoning_content is missing in assistant tool call message at index {i}"
            return Rejection(400, {"error": {"message": text, "type": "invalid_request_error"}})
    return None


def gemini_rule(server: RuleServer, body: dict[str, Any]) -> Rejection | None:
    """Gemini 3: each tool call it made must come back with its thought signature, unchanged (a list body)."""
    for msg in body.get("messages") or []:
        for position, call in enumerate(msg.get("tool_calls") or [], start=1):
            issued = server.signatures.get(call.get("id", ""))
            if issued is None:
                continue
            got = ((call.get("extra_content") or {}).get("google") or {}).get("thought_signature")
            if got != issued:
                name = call.get("function", {}).get("name", "")
                text = (
                    "Function call is missing a thought_signature in functionCall parts. This is required for "
                    "tools to work correctly, and missing thought_signature may lead to degraded model performance. "
                    f"Additional data, function call `default_api:{name}` , position {position}. Please refer to "
                    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
                )
                return Rejection(400, [{"error": {"code": 400, "message": text, "status": "INVALID_ARGUMENT"}}])
    return None


def openrouter_rule(server: RuleServer, body: dict[str, Any]) -> Rejection | None:
    """OpenRouter-style preserved reasoning: reasoning_details it sent must come back exactly (stricter than the
    service, which degrades silently; strict so the test fails when they are dropped or altered)."""
    for msg in body.get("messages") or []:
        if msg.get("role") != "assistant":
            continue
        key = json.dumps(msg.get("tool_calls") or [], sort_keys=True)
        issued = server.details.get(key)
        if issued is not None and msg.get("reasoning_details") != issued:
            return Rejection(
                400, {"error": {"message": "reasoning_details must be passed back unmodified", "code": 400}}
            )
    return None


def strict_openai_rule(server: RuleServer, body: dict[str, Any]) -> Rejection | None:
    """OpenAI validates messages strictly: an unknown field is a 400 (what a client must not send there)."""
    allowed = {"role", "content", "tool_calls", "tool_call_id", "name", "refusal", "audio"}
    for i, msg in enumerate(body.get("messages") or []):
        extra = sorted(set(msg) - allowed)
        if extra:
            text = (
                f"Invalid value: Additional properties are not allowed ('{extra[0]}' was unexpected) - 'messages.{i}'"
            )
            return Rejection(400, {"error": {"message": text, "type": "invalid_request_error", "code": None}})
    return None


# --- replies ----------------------------------------------------------------------------------------
@dataclass
class Call:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str = ""
    signature: str = ""  # Gemini: extra_content.google.thought_signature


def _delta(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def turn_reply(
    *,
    reasoning: tuple[str, ...] = (),
    text: tuple[str, ...] = (),
    calls: tuple[Call, ...] = (),
    shape: str = "reasoning_content",
    details: list[dict[str, Any]] | None = None,
    finish: bool = True,
    done: bool = True,
) -> Reply:
    """One streamed answer. ``shape``: the reasoning field (``reasoning_content``, ``reasoning``), or ``think``
    (``<think>`` tags inside content, split across chunks as a real server's tokens are)."""
    chunks: list[dict[str, Any]] = [_delta({"role": "assistant", "content": ""})]
    if shape == "think":
        whole = "<think>" + "".join(reasoning) + "</think>\n\n" if reasoning else ""
        whole += "".join(text)
        chunks += [_delta({"content": whole[i : i + 3]}) for i in range(0, len(whole), 3)]
    else:
        for piece in reasoning:
            delta: dict[str, Any] = {"content": None, shape: piece}
            chunks.append(_delta(delta))
        if details:
            chunks += [_delta({"content": None, "reasoning_details": [d]}) for d in details]
        chunks += [_delta({"content": piece}) for piece in text]
    for index, c in enumerate(calls):
        first: dict[str, Any] = {
            "index": index,
            "id": c.id or f"call_{next(_ids)}",
            "type": "function",
            "function": {"name": c.name, "arguments": ""},
        }
        if c.signature:
            first["extra_content"] = {"google": {"thought_signature": c.signature}}
        c.id = first["id"]
        args = json.dumps(c.arguments, ensure_ascii=False)
        chunks.append(_delta({"tool_calls": [first]}))
        half = len(args) // 2
        for piece in (args[:half], args[half:]):
            chunks.append(_delta({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    if finish:
        chunks.append(_delta({}, "tool_calls" if calls else "stop"))
    reply = Reply(chunks=chunks)
    reply.headers = {"x-done": "1" if done else "0"}
    reply.calls = list(calls)  # type: ignore[attr-defined]
    reply.details = details  # type: ignore[attr-defined]
    return reply


def silent_reply() -> Reply:
    """Accepts the request and never answers (no status line, no headers)."""
    return Reply(kind="silent")  # type: ignore[arg-type]


def keepalive_reply(after: int = 0, *, text: str = "") -> Reply:
    """Headers (and ``after`` chunks), then only ``: keep-alive`` comments, forever."""
    reply = turn_reply(text=(text,) if text else ())
    reply.kind = "keepalive"  # type: ignore[assignment]
    reply.after = after
    return reply


def truncated_reply(reply: Reply) -> Reply:
    """The same answer without its finish chunk and without ``[DONE]``: the body just ends."""
    reply.chunks = [c for c in reply.chunks if not any(ch.get("finish_reason") for ch in c.get("choices", []))]
    reply.headers = {"x-done": "0"}
    return reply


def bad_json_reply(*text: str) -> Reply:
    """Some text, then a chunk that is not JSON."""
    reply = turn_reply(text=text)
    reply.kind = "badjson"  # type: ignore[assignment]
    reply.after = len(reply.chunks) - 1
    return reply


class RuleServer(FakeOpenAI):
    """The fake server with a provider rule in front of the script."""

    def __init__(self, rule: Rule | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rule = rule
        self.rejections: list[Rejection] = []
        self.signatures: dict[str, str] = {}  # call id -> thought signature issued
        self.details: dict[str, list[dict[str, Any]]] = {}  # tool calls (json) -> reasoning_details issued
        self.extra_routes: list[tuple[str, str, Callable[[web.Request], Any]]] = []
        self.silent_waiting = asyncio.Event()
        self.models_payload: list[dict[str, Any]] | None = None  # GET /v1/models entries as the endpoint sends them

    async def _models(self, request: web.Request) -> web.Response:
        if self.models_payload is not None:
            return web.json_response({"object": "list", "data": self.models_payload})
        return await super()._models(request)

    def _add_routes(self, app: web.Application) -> None:
        super()._add_routes(app)
        for method, path, handler in self.extra_routes:
            app.router.add_route(method, path, handler)

    async def __aenter__(self) -> RuleServer:
        return await self.start()

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            return web.json_response({"error": {"message": "body is not JSON"}}, status=400)
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        if self.rule is not None:
            rejection = self.rule(self, body)
            if rejection is not None:
                self.rejections.append(rejection)
                return web.json_response(rejection.body, status=rejection.status)
        if not self.script:
            return web.json_response({"error": {"message": "fake server: script exhausted"}}, status=500)
        reply = self.script.popleft()
        for c in getattr(reply, "calls", []) or []:
            if c.signature:
                self.signatures[c.id] = c.signature
        details = getattr(reply, "details", None)
        if details:
            calls = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)},
                }
                for c in reply.calls  # type: ignore[attr-defined]
            ]
            self.details[json.dumps(calls, sort_keys=True)] = details
        kind: str = reply.kind
        if kind == "error":
            return web.json_response(reply.body, status=reply.status, headers=reply.headers)
        if kind == "silent":
            self.silent_waiting.set()
            await self._release.wait()
            return web.Response(status=503, text="server stopped")
        if kind in ("keepalive", "badjson"):
            return await self._special(request, reply)
        if reply.headers.get("x-done") == "0":
            return await self._no_done(request, reply)
        return await self._stream(request, reply)

    async def _prepare(self, request: web.Request) -> web.StreamResponse:
        self.started_streams += 1
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        return resp

    async def _no_done(self, request: web.Request, reply: Reply) -> web.StreamResponse:
        resp = await self._prepare(request)
        chat_id = f"chatcmpl-{next(_ids)}"
        try:
            for chunk in reply.chunks:
                await resp.write(self._frame(chunk, chat_id))
            await resp.write_eof()
        except ConnectionError:
            self.disconnects += 1
        return resp

    async def _special(self, request: web.Request, reply: Reply) -> web.StreamResponse:
        resp = await self._prepare(request)
        chat_id = f"chatcmpl-{next(_ids)}"
        try:
            for chunk in reply.chunks[: reply.after]:
                await resp.write(self._frame(chunk, chat_id))
            if reply.kind == "badjson":
                await resp.write(b'data: {"id": "x", "choices": [{"delta": {"content": "oops"}\n\n')
                await resp.write(b"data: [DONE]\n\n")
                await resp.write_eof()
                return resp
            self.hanging.set()
            while not self._release.is_set():
                await resp.write(b": keep-alive\n\n")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._release.wait(), 0.05)
        except ConnectionError:
            self.disconnects += 1
        except asyncio.CancelledError:
            self.disconnects += 1
            raise
        return resp


def tool_names(server: FakeOpenAI, request: int = -1) -> list[str]:
    return server.tool_names(request)


__all__ = [
    "DEEPSEEK_MISSING",
    "Call",
    "Rejection",
    "RuleServer",
    "ToolCallSpec",
    "bad_json_reply",
    "deepseek_rule",
    "gemini_rule",
    "keepalive_reply",
    "kimi_rule",
    "openrouter_rule",
    "silent_reply",
    "strict_openai_rule",
    "truncated_reply",
    "turn_reply",
]
