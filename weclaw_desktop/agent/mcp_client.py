"""What the agent gives MCP servers: sampling through the current provider, and a terminal user agent.

- :class:`ProviderSampler` answers a server's sampling request with the model the user configured (the
  runtime's provider at the moment of the request), never with tools, and only after the user agent
  approved it (``mcp/callbacks.py`` asks first).
- :class:`TerminalUserAgent` is ``weclaw chat``'s person: an elicitation form becomes one prompt per
  field (Enter keeps the default, ``!decline`` / ``!cancel`` end it), a URL request is printed, and a
  sampling request is shown in full before the yes/no. Without a terminal it declines (and says so),
  because nobody can answer.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

from weclaw_desktop.agent.provider import Provider
from weclaw_desktop.agent.terminal import LineReader
from weclaw_desktop.i18n import tr
from weclaw_desktop.mcp.interact import (
    ElicitAnswer,
    FormField,
    FormRequest,
    SamplingAnswer,
    SamplingRequest,
    UrlRequest,
)

MAX_SAMPLING_CHARS = 20_000  # a server cannot make the user's model write a book


class ProviderSampler:
    """Sampling through ``provider()`` (read at each request: a settings change applies at once)."""

    def __init__(self, provider: Callable[[], Provider]) -> None:
        self.provider = provider

    async def sample(self, request: SamplingRequest) -> SamplingAnswer:
        messages: list[dict[str, Any]] = []
        if request.system_prompt:
            messages.append({"role": "system", "content": request.system_prompt})
        messages += [{"role": "assistant" if r == "assistant" else "user", "content": t} for r, t in request.messages]
        provider = self.provider()
        completion = await provider.stream(messages)
        text = completion.text
        # the provider has no per-request token limit: keep the answer near what the server asked for
        limit = min(MAX_SAMPLING_CHARS, max(200, request.max_tokens * 6))
        stop = "maxTokens" if len(text) > limit else "endTurn"
        return SamplingAnswer(text=text[:limit], model=provider.config.model, stop_reason=stop)


def _convert(field: FormField, text: str) -> Any:
    if field.kind == "boolean":
        low = text.strip().lower()
        if low in ("y", "yes", "true", "1", "是", "对"):
            return True
        if low in ("n", "no", "false", "0", "否", "不"):
            return False
        raise ValueError(tr("mcp.elicit.cli.bool"))
    if field.kind == "integer":
        return int(text)
    if field.kind == "number":
        return float(text)
    if field.kind == "choices":
        return [v.strip() for v in text.split(",") if v.strip()]
    return text


class TerminalUserAgent:
    def __init__(self, reader: LineReader, out: TextIO | None = None) -> None:
        self.reader = reader
        self.out = out or sys.stderr

    def _say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    async def elicit(self, request: FormRequest | UrlRequest) -> ElicitAnswer:
        if not self.reader.interactive():
            self._say(tr("mcp.elicit.cli.no_terminal", server=request.server))
            return ElicitAnswer("decline")
        self._say(tr("mcp.elicit.cli.asks", server=request.server, message=request.message))
        if isinstance(request, UrlRequest):
            self._say(tr("mcp.elicit.cli.url", url=request.url))
            line = await self.reader.readline(tr("mcp.elicit.cli.url_done"), out=self.out)
            return ElicitAnswer(
                "accept" if line is not None and line.strip().lower() in ("y", "yes", "是") else "decline"
            )
        self._say(tr("mcp.elicit.cli.how"))
        content: dict[str, Any] = {}
        for field in request.fields:
            while True:
                hint = f" [{'/'.join(v for v, _ in field.choices)}]" if field.choices else ""
                default = f" ({field.default})" if field.default is not None else ""
                need = "*" if field.required else ""
                line = await self.reader.readline(f"  {field.label}{need}{hint}{default}: ", out=self.out)
                if line is None or line.strip() == "!cancel":
                    return ElicitAnswer("cancel")
                if line.strip() == "!decline":
                    return ElicitAnswer("decline")
                if not line.strip():
                    if field.default is not None:
                        content[field.name] = field.default
                    break
                try:
                    content[field.name] = _convert(field, line.strip())
                except ValueError as exc:
                    self._say(f"  ! {exc}")
                    continue
                break
        problems = request.problems(content)
        if problems:
            self._say(tr("mcp.elicit.cli.invalid", problems="; ".join(problems)))
            return ElicitAnswer("cancel")
        return ElicitAnswer("accept", content)

    async def approve_sampling(self, request: SamplingRequest) -> bool:
        if not self.reader.interactive():
            self._say(tr("mcp.sampling.cli.no_terminal", server=request.server))
            return False
        self._say(tr("mcp.sampling.cli.asks", server=request.server, n=request.max_tokens))
        if request.system_prompt:
            self._say(f"  [system] {request.system_prompt}")
        for role, text in request.messages:
            self._say(f"  [{role}] {text}")
        line = await self.reader.readline(tr("mcp.sampling.cli.choice"), out=self.out)
        return line is not None and line.strip().lower() in ("y", "yes", "是")
