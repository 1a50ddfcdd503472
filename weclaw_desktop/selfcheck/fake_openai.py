"""A tiny in-process OpenAI-compatible endpoint for the self-test (aiohttp on 127.0.0.1, a free port).

``POST /v1/chat/completions`` with ``stream: true`` answers with a few ``chat.completion.chunk`` events
and ``data: [DONE]``, the shapes real servers send (ENGINEERING_NOTES.md). It records each request so the
self-test can check what the real provider sent. Nothing leaves the machine.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

REPLY_PIECES = ("WeClaw ", "self-test ", "reply")
REPLY = "".join(REPLY_PIECES)


@dataclass
class SeenRequest:
    path: str
    authorization: str
    body: dict[str, Any]


@dataclass
class FakeOpenAI:
    """``async with FakeOpenAI() as server: server.base_url`` -> ``http://127.0.0.1:<port>/v1``."""

    model: str = "selftest-model"
    requests: list[SeenRequest] = field(default_factory=list)
    _runner: web.AppRunner | None = None
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def __aenter__(self) -> FakeOpenAI:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._completions)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        addresses = self._runner.addresses
        if not addresses:
            raise RuntimeError("the fake endpoint did not bind a port")
        self.port = int(addresses[0][1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(SeenRequest(request.path, request.headers.get("Authorization", ""), body))
        if not body.get("stream"):
            return web.json_response({"error": {"message": "this test endpoint only streams"}}, status=400)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        chunk_id = "chatcmpl-selftest"
        created = int(time.time())
        deltas: list[tuple[dict[str, Any], str | None]] = [({"role": "assistant", "content": ""}, None)]
        deltas += [({"content": piece}, None) for piece in REPLY_PIECES]
        deltas.append(({}, "stop"))
        for delta, finish in deltas:
            chunk = {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": body.get("model", self.model),
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        if (body.get("stream_options") or {}).get("include_usage"):
            usage = {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": body.get("model", self.model),
                "choices": [],
                "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
            }
            await response.write(f"data: {json.dumps(usage)}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response
