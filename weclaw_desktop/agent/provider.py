"""The model endpoint: the openai SDK's ``AsyncOpenAI`` against any OpenAI-compatible URL.

:meth:`Provider.stream` sends one chat completion request with ``stream=True`` and assembles the answer:
text deltas go to a callback as they arrive, tool-call deltas are assembled by ``index`` (parallel tool
calls included), and usage is taken from the final chunk when the endpoint sends it. Retries of 429
(honouring Retry-After), 5xx and connection errors are the SDK's own (``max_retries``). Everything that
goes wrong becomes a :class:`ProviderError` with a one-line message for the user and a ``kind``.

The stream is used as ``async with stream:`` so that cancelling the task that awaits :meth:`stream`
(Stop) closes the HTTP response at once (ENGINEERING_NOTES.md).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import openai
from openai import AsyncOpenAI, AsyncStream
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from weclaw_desktop.agent.presets import Preset, get_preset, preset_for_url
from weclaw_desktop.net import ssl_context
from weclaw_desktop.toolkit.redact import redact

#: Longest stretch of stream parsing without letting the event loop run other work.
YIELD_EVERY_S = 0.008

log = logging.getLogger("weclaw.provider")

NO_KEY_PLACEHOLDER = "not-needed"  # local servers (Ollama, LM Studio) ignore the key but the SDK wants one


class ProviderError(Exception):
    """A request failed. ``message`` is one line for the user; ``kind`` is for the UI and exit codes.

    kinds: auth | connection | rate_limit | server | tools_unsupported | bad_request | not_configured
    """

    def __init__(
        self, kind: str, message: str, *, retryable: bool = False, status: int | None = None, partial: str = ""
    ) -> None:
        super().__init__(message)
        self.partial = partial  # text already streamed when the connection dropped
        self.kind = kind
        self.message = message
        self.retryable = retryable
        self.status = status


@dataclass
class ProviderConfig:
    base_url: str
    model: str
    api_key: str | None = None
    timeout_s: float = 120.0
    max_retries: int = 2
    preset: str = ""
    extra_headers: dict[str, str] = field(default_factory=dict)

    @property
    def preset_info(self) -> Preset:
        return get_preset(self.preset) if self.preset else preset_for_url(self.base_url)


@dataclass
class AssembledCall:
    index: int
    id: str = ""
    name: str = ""
    arguments: str = ""

    def as_message(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


@dataclass
class Completion:
    text: str = ""
    tool_calls: list[AssembledCall] = field(default_factory=list)
    finish_reason: str = ""
    usage: Usage | None = None
    model: str = ""


class CallAssembler:
    """Joins streamed tool-call deltas into whole calls, keyed by ``index``."""

    def __init__(self) -> None:
        self._slots: dict[int, AssembledCall] = {}

    def add(self, delta: Any) -> None:
        index = getattr(delta, "index", None)
        call_id = getattr(delta, "id", None) or ""
        if index is None:  # some servers omit index: match by id, else a new slot
            index = next((i for i, s in self._slots.items() if call_id and s.id == call_id), len(self._slots))
        slot = self._slots.get(index)
        if slot is None:
            slot = self._slots[index] = AssembledCall(index=index)
        if call_id and not slot.id:
            slot.id = call_id
        fn = getattr(delta, "function", None)
        if fn is not None:
            name = getattr(fn, "name", None) or ""
            if name and name != slot.name:
                slot.name = name if not slot.name else slot.name + name
            slot.arguments += getattr(fn, "arguments", None) or ""

    def calls(self) -> list[AssembledCall]:
        out = []
        for index in sorted(self._slots):
            slot = self._slots[index]
            if not slot.name and not slot.arguments:
                continue
            if not slot.id:
                slot.id = f"call_{index}_{uuid.uuid4().hex[:8]}"
            out.append(slot)
        return out


class Provider:
    def __init__(self, config: ProviderConfig, *, client: AsyncOpenAI | None = None) -> None:
        self.config = config
        self._client = client
        self._stream_usage = config.preset_info.stream_usage

    @property
    def client(self) -> AsyncOpenAI:
        if self._client is None:
            if not self.config.base_url:
                raise ProviderError(
                    "not_configured", "No model endpoint is set up. Choose a provider and model in Settings."
                )
            key = self.config.api_key
            if not key:
                if self.config.preset_info.needs_key and not _is_local(self.config.base_url):
                    raise ProviderError(
                        "auth",
                        f"No API key for {self.config.base_url}. Enter it in Settings or set WECLAW_API_KEY.",
                    )
                key = NO_KEY_PLACEHOLDER
            self._client = AsyncOpenAI(
                base_url=self.config.base_url,
                api_key=key,
                timeout=self.config.timeout_s,
                max_retries=self.config.max_retries,
                default_headers=self.config.extra_headers or None,
                # system CAs, or certifi's where the system has none (a bundle on a bare Linux machine)
                http_client=openai.DefaultAsyncHttpxClient(verify=ssl_context()),
            )
        return self._client

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def stream(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] = (),
        *,
        on_text: Callable[[str], None] | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> Completion:
        """One streamed completion. Raises :class:`ProviderError` (or CancelledError on Stop).

        ``params``: generation settings of the assistant (temperature, top_p, max_tokens, ...), sent as given."""
        if not self.config.model:
            raise ProviderError("not_configured", "No model is chosen. Pick a model in Settings or pass --model.")
        kwargs: dict[str, Any] = {
            **(params or {}),
            "model": self.config.model,
            "messages": list(messages),
            "stream": True,
        }
        if tools:
            kwargs["tools"] = list(tools)
        if self._stream_usage:
            kwargs["stream_options"] = {"include_usage": True}
        try:
            return await self._stream(kwargs, on_text)
        except openai.BadRequestError as exc:
            if "stream_options" in kwargs and "stream_options" in _server_message(exc):
                log.info("endpoint rejects stream_options; retrying without usage reporting")
                self._stream_usage = False
                del kwargs["stream_options"]
                try:
                    return await self._stream(kwargs, on_text)
                except openai.OpenAIError as again:
                    raise self._classify(again, bool(tools)) from again
            raise self._classify(exc, bool(tools)) from exc
        except openai.OpenAIError as exc:
            raise self._classify(exc, bool(tools)) from exc

    async def _stream(self, kwargs: dict[str, Any], on_text: Callable[[str], None] | None) -> Completion:
        result = Completion()
        calls = CallAssembler()
        text_parts: list[str] = []
        received = False
        # The SDK's own create() first runs a recursive TypedDict transform over every message and tool
        # schema (tens of ms per round with a long history); our body is already plain JSON, so post it
        # through the client's generic request method: same retries, errors, headers and stream class.
        stream = await self.client.post(
            "/chat/completions",
            cast_to=ChatCompletion,
            body=kwargs,
            stream=True,
            stream_cls=AsyncStream[ChatCompletionChunk],
        )
        last_yield = time.perf_counter()
        try:
            async with stream:
                async for chunk in stream:
                    received = True
                    # Chunks that arrive together are parsed without awaiting anything; give the UI a turn
                    # at least every YIELD_EVERY_S so a burst of 2,000 buffered tokens cannot freeze it.
                    now = time.perf_counter()
                    if now - last_yield > YIELD_EVERY_S:
                        await asyncio.sleep(0)
                        last_yield = time.perf_counter()
                    if chunk.usage is not None:
                        u = chunk.usage
                        result.usage = Usage(u.prompt_tokens or 0, u.completion_tokens or 0, u.total_tokens or 0)
                    if chunk.model:
                        result.model = chunk.model
                    for choice in chunk.choices or []:
                        delta = choice.delta
                        if delta is not None:
                            if delta.content:
                                text_parts.append(delta.content)
                                if on_text is not None:
                                    on_text(delta.content)
                            for tc in delta.tool_calls or []:
                                calls.add(tc)
                        if choice.finish_reason:
                            result.finish_reason = choice.finish_reason
        except openai.APIConnectionError as exc:
            if not received:
                raise
            log.warning("stream broke: %s", redact(str(exc)))
            raise _dropped(self.config.base_url, "".join(text_parts)) from exc
        except openai.OpenAIError:
            raise
        except Exception as exc:  # a transport error while reading (httpx2 errors are not wrapped mid-stream)
            log.warning("stream broke: %s: %s", type(exc).__name__, redact(str(exc)))
            raise _dropped(self.config.base_url, "".join(text_parts)) from exc
        result.text = "".join(text_parts)
        result.tool_calls = calls.calls()
        if not received:
            raise ProviderError("server", "The endpoint returned an empty answer. Try again or check the model name.")
        return result

    def _classify(self, exc: openai.OpenAIError, sent_tools: bool) -> ProviderError:
        url = self.config.base_url
        status = getattr(exc, "status_code", None)
        detail = _server_message(exc)
        log.warning("provider error %s (%s): %s", type(exc).__name__, status, redact(detail))
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            return ProviderError(
                "auth", f"The endpoint rejected the API key ({status}). Check the key in Settings.", status=status
            )
        if isinstance(exc, openai.RateLimitError):
            extra = " Your quota may be used up." if "quota" in detail.lower() else ""
            return ProviderError(
                "rate_limit",
                f"The endpoint is limiting requests (429) and retries did not help.{extra} Wait a moment and try again.",
                retryable=True,
                status=status,
            )
        if isinstance(exc, openai.APITimeoutError):
            return ProviderError("connection", f"{url} did not answer in time. Try again.", retryable=True)
        if isinstance(exc, openai.APIConnectionError):
            return ProviderError(
                "connection",
                f"Cannot reach {url} ({_short(detail)}). Check the address and your network.",
                retryable=True,
            )
        if isinstance(exc, openai.APIStatusError):
            if sent_tools and status in (400, 404, 422, 501) and _TOOLS_REJECTED.search(detail):
                return ProviderError(
                    "tools_unsupported",
                    f"The model '{self.config.model}' at {url} does not accept tools (function calling): "
                    f"{_short(detail)}. Choose a model that supports tool calling.",
                    status=status,
                )
            if status == 404:
                return ProviderError(
                    "bad_request",
                    f"Not found (404): the model '{self.config.model}' or the base URL {url} is wrong. {_short(detail)}",
                    status=status,
                )
            if status is not None and status >= 500:
                return ProviderError(
                    "server", f"The endpoint failed ({status}): {_short(detail)}. Try again later.", retryable=True
                )
            return ProviderError("bad_request", f"The endpoint refused the request ({status}): {_short(detail)}")
        if isinstance(exc, openai.APIResponseValidationError):
            return ProviderError(
                "server", f"The endpoint sent an answer that is not OpenAI-compatible: {_short(detail)}"
            )
        return ProviderError("internal", f"{type(exc).__name__}: {_short(detail)}")

    # --- models and health -------------------------------------------------------------------------
    async def list_models(self) -> list[str]:
        """Model ids from the endpoint's ``/models``; the preset's suggestions when it has none."""
        preset = self.config.preset_info
        if not preset.has_models_endpoint:
            return list(preset.known_models)
        try:
            page = await self.client.models.list()
        except openai.OpenAIError as exc:
            raise self._classify(exc, False) from exc
        return sorted({m.id for m in page.data})

    async def check(self) -> str:
        """Whether the endpoint answers and accepts the key; returns a one-line description."""
        preset = self.config.preset_info
        if preset.has_models_endpoint:
            models = await self.list_models()
            found = "" if not self.config.model or self.config.model in models else " (the chosen model is not listed)"
            return f"{len(models)} models available{found}"
        await self.stream([{"role": "user", "content": "ping"}])
        return "answered a test message"


_TOOLS_REJECTED = re.compile(r"tool|function", re.IGNORECASE)


def _server_message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
    return str(getattr(exc, "message", None) or exc)


def _short(text: str, limit: int = 200) -> str:
    line = " ".join(redact(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _dropped(url: str, partial: str) -> ProviderError:
    got = " after part of the answer" if partial else ""
    return ProviderError(
        "connection",
        f"The connection to {url} dropped{got}. Send the message again to retry.",
        retryable=True,
        partial=partial,
    )


def _is_local(url: str) -> bool:
    return bool(re.match(r"https?://(localhost|127\.|\[::1\])", url))
