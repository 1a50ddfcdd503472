"""The model endpoint: the openai SDK's ``AsyncOpenAI`` against any OpenAI-compatible URL, under its profile.

:meth:`Provider.stream` sends one chat completion with ``stream=True`` and assembles the answer (``assembly.py``):
answer and reasoning deltas go to callbacks as they arrive, tool calls are assembled by ``index``.

Robustness, with one budget:

- **connect** within ``connect_s``;
- **first event** (any ``data:`` line) within ``first_token_s`` from sending, *including retries*: each attempt gets
  its share of what is left, so an endpoint that accepts the request and never answers is reported within the
  budget (60 s by default), however many retries are configured;
- **idle**: once it streams, at most ``idle_s`` between events. SSE keep-alive comments do not count as progress
  (a server that sends only ``: keep-alive`` is reported, not waited on forever).
- Retries (connection errors, timeouts, 408/409/429/5xx before the first event, honouring Retry-After) are done
  here, not by the SDK, so they stay inside the budget. Nothing is retried once events have arrived.
- A stream that ends with neither ``finish_reason`` nor ``[DONE]`` is **incomplete**: its tool calls are not
  returned (so never run) and the error says so; a chunk that is not JSON is **bad data from the endpoint**.

The SDK still builds the request (auth, headers, base URL) and maps HTTP errors; the body of the response is read
here (``sse.py``), because only there can ``[DONE]``, keep-alive comments and bad JSON be told apart. Cancelling the
task that awaits :meth:`stream` (Stop) closes the HTTP response at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import random
import re
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai
from openai import AsyncOpenAI

from weclaw_desktop.agent.provider import capabilities as caps_mod
from weclaw_desktop.agent.provider.assembly import Completion, StreamAssembler
from weclaw_desktop.agent.provider.capabilities import ModelCapabilities
from weclaw_desktop.agent.provider.errors import ProviderError, classify, dropped, rejects_field, server_message, short
from weclaw_desktop.agent.provider.messages import echoed_fields, source_id
from weclaw_desktop.agent.provider.profiles import Capabilities, Profile, profile_for
from weclaw_desktop.agent.provider.request import ThinkingChoice, ThinkingUnsupported, build_body, check_thinking
from weclaw_desktop.agent.provider.sse import Event, SSEReader
from weclaw_desktop.net import shared_ssl_context
from weclaw_desktop.toolkit.redact import redact

#: Longest stretch of stream parsing without letting the event loop run other work.
YIELD_EVERY_S = 0.008
#: Retry backoff before the first event: 0.5 s, 1 s, 2 s … at most this (a Retry-After header wins).
MAX_BACKOFF_S = 8.0
#: How long the capability query of an endpoint may take (it must never delay a turn much).
CAPABILITY_TIMEOUT_S = 8.0

log = logging.getLogger("weclaw.provider")

NO_KEY_PLACEHOLDER = "not-needed"  # local servers (Ollama, LM Studio) ignore the key but the SDK wants one
_RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class StreamTimeouts:
    connect_s: float = 10.0
    first_token_s: float = 60.0  # sending -> first event, retries included
    idle_s: float = 60.0  # between events once streaming; keep-alive comments do not reset it


@dataclass
class ProviderConfig:
    base_url: str
    model: str
    api_key: str | None = None
    timeout_s: float = 120.0  # non-streamed requests (model list, capability queries)
    max_retries: int = 2
    preset: str = ""
    extra_headers: dict[str, str] = field(default_factory=dict)
    timeouts: StreamTimeouts = field(default_factory=StreamTimeouts)
    thinking: ThinkingChoice = field(default_factory=ThinkingChoice)
    capabilities: dict[str, Capabilities] = field(default_factory=dict)  # the user's, per model

    @property
    def profile(self) -> Profile:
        return profile_for(self.preset, self.base_url)


class _Timeout(Exception):
    def __init__(self, phase: str, keepalives: int) -> None:
        super().__init__(phase)
        self.phase = phase
        self.keepalives = keepalives


class Provider:
    def __init__(self, config: ProviderConfig, *, client: AsyncOpenAI | None = None) -> None:
        self.config = config
        self.profile = config.profile
        self.source = source_id(self.profile, config.base_url)
        self._client = client
        self._stream_usage = self.profile.stream_usage
        self._echo = True  # set False once the endpoint refused the fields we return
        self._caps: dict[str, ModelCapabilities] = {}

    @property
    def client(self) -> AsyncOpenAI:
        """The SDK client, built here when it is not yet (blocking: on the loop, use :meth:`ready`)."""
        if self._client is None:
            self._client = self._build_client()
        return self._client

    async def ready(self) -> AsyncOpenAI:
        """The SDK client; the first time it is built in a worker thread: the TLS trust (the CA file, 50-80
        ms, once per process) and the http client (its transport's first set-up, ~0.2 s) must not stall
        the UI's loop. A provider built later (a switch of model or configuration) reuses the trust."""
        if self._client is None:
            built = await asyncio.to_thread(self._prepare)
            if self._client is None:  # two first requests at once: the first one built wins
                self._client = built
        return self._client

    def _prepare(self) -> AsyncOpenAI:
        """In a worker thread: the client, and the import the first request would do on the loop (anyio
        loads its asyncio backend when the connection pool first asks for it: ~15 ms)."""
        client = self._build_client()
        with contextlib.suppress(ImportError):
            importlib.import_module("anyio._backends._asyncio")
        return client

    def _build_client(self) -> AsyncOpenAI:
        if not self.config.base_url:
            raise ProviderError(
                "not_configured", "No model endpoint is set up. Choose a provider and model in Settings."
            )
        key = self.config.api_key
        if not key:
            if self.profile.needs_key and not _is_local(self.config.base_url):
                raise ProviderError(
                    "auth",
                    f"No API key for {self.config.base_url}. Enter it in Settings or set WECLAW_API_KEY.",
                )
            key = NO_KEY_PLACEHOLDER
        return AsyncOpenAI(
            base_url=self.config.base_url,
            api_key=key,
            timeout=httpx2.Timeout(self.config.timeout_s, connect=self.config.timeouts.connect_s),
            max_retries=self.config.max_retries,
            default_headers=self.config.extra_headers or None,
            # system CAs, or certifi's where the system has none (a bundle on a bare Linux machine)
            http_client=openai.DefaultAsyncHttpxClient(verify=shared_ssl_context()),
        )

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    # --- streaming -----------------------------------------------------------------------------------
    async def stream(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] = (),
        *,
        on_text: Callable[[str], None] | None = None,
        on_reasoning: Callable[[str], None] | None = None,
        on_retract: Callable[[str], None] | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> Completion:
        """One streamed completion. Raises :class:`ProviderError` (or CancelledError on Stop).

        ``params``: the assistant's generation settings (temperature, top_p, max_tokens, ...); parameters the
        profile says the endpoint rejects are still left out."""
        if not self.config.model:
            raise ProviderError("not_configured", "No model is chosen. Pick a model in Settings or pass --model.")
        try:
            check_thinking(self.profile.thinking, self.config.thinking, self.profile.label)
        except ThinkingUnsupported as exc:
            raise ProviderError("not_configured", f"{exc}. Change the thinking setting in Settings.") from exc
        fallbacks = 0
        while True:
            body = build_body(
                self.profile,
                model=self.config.model,
                messages=messages,
                tools=tools,
                thinking=self.config.thinking,
                source=self.source,
                echo=self._echo,
                stream_usage=self._stream_usage,
                params=params,
            )
            try:
                return await self._stream(body, on_text, on_reasoning, on_retract)
            except openai.BadRequestError as exc:
                # two documented ways an endpoint refuses what a stricter one would need, each tried once
                if fallbacks < 2 and "stream_options" in body and "stream_options" in server_message(exc):
                    log.info("endpoint rejects stream_options; retrying without usage reporting")
                    self._stream_usage = False
                    fallbacks += 1
                    continue
                if fallbacks < 2 and self._echo and rejects_field(exc, echoed_fields(body["messages"])):
                    log.warning("endpoint refuses returned reasoning/opaque fields; sending plain messages from now on")
                    self._echo = False
                    fallbacks += 1
                    continue
                raise classify(exc, url=self.config.base_url, model=self.config.model, sent_tools=bool(tools)) from exc
            except openai.OpenAIError as exc:
                raise classify(exc, url=self.config.base_url, model=self.config.model, sent_tools=bool(tools)) from exc

    async def _stream(
        self,
        body: dict[str, Any],
        on_text: Callable[[str], None] | None,
        on_reasoning: Callable[[str], None] | None,
        on_retract: Callable[[str], None] | None,
    ) -> Completion:
        url = self.config.base_url
        limits = self.config.timeouts
        response, events, reader = await self._open(body)
        assembler = StreamAssembler(self.profile, on_text=on_text, on_reasoning=on_reasoning, on_retract=on_retract)
        done = False
        last_yield = time.perf_counter()
        idle = _IdleWatch(limits.idle_s)
        try:
            first = True
            while True:
                try:
                    if first:
                        event = events.first
                        first = False
                    else:
                        event = await idle.next(events, reader)
                except _Timeout as exc:
                    raise self._idle_error(exc, assembler) from None
                except (httpx2.TransportError, openai.APIConnectionError) as exc:
                    log.warning("stream broke: %s: %s", type(exc).__name__, redact(str(exc)))
                    raise dropped(url, assembler.text, assembler.reasoning, assembler.calls.pending()) from exc
                if event is None:
                    break
                if event.data.strip() == "[DONE]":
                    done = True
                    break
                chunk = _parse(event, url, assembler)
                # chunks that arrive together are parsed without awaiting anything; give the UI a turn at least
                # every YIELD_EVERY_S so a burst of 2,000 buffered tokens cannot freeze it
                now = time.perf_counter()
                if now - last_yield > YIELD_EVERY_S:
                    await asyncio.sleep(0)
                    last_yield = time.perf_counter()
                assembler.add(chunk)
        finally:
            idle.close()
            await response.aclose()
        if assembler.chunks == 0:
            raise ProviderError("server", "The endpoint returned an empty answer. Try again or check the model name.")
        if not done and not assembler.result.finish_reason:
            calls = assembler.calls.pending()
            not_run = f" Its {calls} tool call(s) were not run." if calls else ""
            raise ProviderError(
                "incomplete",
                f"The answer from {url} stopped before it was finished (the stream ended without a finish reason or "
                f"[DONE]).{not_run} Send the message again to retry.",
                retryable=True,
                partial=assembler.text,
                partial_reasoning=assembler.reasoning,
                dropped_calls=calls,
            )
        result = assembler.finish(done=done)
        result.source = self.source
        if not result.model:
            result.model = self.config.model
        return result

    def _idle_error(self, exc: _Timeout, assembler: StreamAssembler) -> ProviderError:
        limit = self.config.timeouts.idle_s
        only = " (only keep-alive messages)" if exc.keepalives else ""
        calls = assembler.calls.pending()
        not_run = f" Its {calls} tool call(s) were not run." if calls else ""
        return ProviderError(
            "timeout",
            f"{self.config.base_url} stopped sending in the middle of the answer: nothing for {limit:g} s{only}."
            f"{not_run} Send the message again to retry.",
            retryable=True,
            partial=assembler.text,
            partial_reasoning=assembler.reasoning,
            dropped_calls=calls,
        )

    async def _open(self, body: dict[str, Any]) -> tuple[httpx2.Response, _Events, SSEReader]:
        """Send the request and wait for its first event, retrying inside the first-token budget."""
        limits = self.config.timeouts
        attempts = self.config.max_retries + 1
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limits.first_token_s
        last: BaseException | None = None
        keepalives = 0
        tried = 0
        for attempt in range(attempts):
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            share = remaining / (attempts - attempt)
            reader = SSEReader()
            response: httpx2.Response | None = None
            try:
                async with asyncio.timeout(share):
                    client = await self.ready()
                    response = await client.post(
                        "/chat/completions",
                        cast_to=httpx2.Response,
                        body=body,
                        options={
                            "max_retries": 0,
                            "timeout": httpx2.Timeout(None, connect=min(limits.connect_s, share)),
                        },
                        stream=True,
                    )
                    events = _Events(response.aiter_bytes(), reader)
                    events.first = await events.next()
                return response, events, reader
            except TimeoutError:
                keepalives += reader.comments
                last = _Timeout("first", reader.comments)
                log.warning("attempt %d/%d: no first event within %.1f s", attempt + 1, attempts, share)
            except (openai.APIConnectionError, httpx2.TransportError) as exc:  # incl. APITimeoutError (connect)
                last = exc
                log.warning("attempt %d/%d: %s", attempt + 1, attempts, type(exc).__name__)
            except openai.APIStatusError as exc:
                if exc.status_code not in _RETRY_STATUS:
                    raise
                last = exc
                log.warning("attempt %d/%d: HTTP %s", attempt + 1, attempts, exc.status_code)
            except BaseException:
                if response is not None:
                    await response.aclose()
                raise
            if response is not None:
                await response.aclose()
            tried = attempt + 1
            if tried < attempts and not isinstance(last, _Timeout):  # a timeout already waited its share
                wait = _backoff(attempt, last)
                if loop.time() + wait >= deadline:
                    break
                await asyncio.sleep(wait)
        raise self._open_error(last, keepalives, tried)

    def _open_error(self, last: BaseException | None, keepalives: int, attempts: int) -> BaseException:
        url = self.config.base_url
        budget = self.config.timeouts.first_token_s
        if isinstance(last, openai.OpenAIError):
            return last  # classified by stream()
        if isinstance(last, httpx2.TransportError):
            return ProviderError(
                "connection", f"Cannot reach {url} ({short(str(last) or type(last).__name__)}).", retryable=True
            )
        what = "sent only keep-alive messages and no answer" if keepalives else "did not answer"
        tries = f", {attempts} tries" if attempts > 1 else ""
        return ProviderError(
            "timeout",
            f"{url} {what} within {budget:g} s{tries}. Check that the endpoint and model are up, "
            "or raise the first-answer timeout in Settings.",
            retryable=True,
        )

    # --- models and health -------------------------------------------------------------------------
    async def list_models(self) -> list[str]:
        """Model ids from the endpoint's ``/models``; the profile's known models when it has none."""
        if self.profile.models.listing == "none":
            return [m for m in self.profile.models.known if not any(ch in m for ch in "*?[")]
        try:
            page = await (await self.ready()).models.list()
        except openai.OpenAIError as exc:
            raise classify(exc, url=self.config.base_url, model=self.config.model, sent_tools=False) from exc
        return sorted({m.id for m in page.data})

    async def check(self) -> str:
        """Whether the endpoint answers and accepts the key; returns a one-line description."""
        if self.profile.models.listing != "none":
            models = await self.list_models()
            found = "" if not self.config.model or self.config.model in models else " (the chosen model is not listed)"
            return f"{len(models)} models available{found}"
        await self.stream([{"role": "user", "content": "ping"}])
        return "answered a test message"

    async def capabilities(self, model: str | None = None) -> ModelCapabilities:
        """What ``model`` (default: the configured one) can do: the user's values, the endpoint's, the profile's.

        The endpoint is asked once per model and provider; a failure there only means "not known"."""
        name = model or self.config.model
        cached = self._caps.get(name)
        if cached is not None:
            return cached
        endpoint: Capabilities | None = None
        if self.profile.models.capabilities != "none" and self.config.base_url:
            try:
                endpoint = await asyncio.wait_for(self._endpoint_caps(name), CAPABILITY_TIMEOUT_S)
            except (TimeoutError, openai.OpenAIError, ProviderError, ValueError) as exc:
                log.info(
                    "capabilities of %s unknown from the endpoint: %s", name, short(str(exc) or type(exc).__name__)
                )
        result = caps_mod.resolve(
            name,
            user=self.config.capabilities.get(name),
            endpoint=endpoint,
            profile=self.profile.models.lookup(name),
        )
        self._caps[name] = result
        return result

    async def _endpoint_caps(self, model: str) -> Capabilities | None:
        kind = self.profile.models.capabilities
        client = await self.ready()
        t = CAPABILITY_TIMEOUT_S
        if kind == "openrouter":
            listing = await client.get("/models", cast_to=object, options={"max_retries": 0, "timeout": t})
            return caps_mod.from_openrouter(listing, model)
        root = re.sub(r"/v1/?$", "", self.config.base_url.rstrip("/"))
        if kind == "ollama":
            show = await client.post(
                f"{root}/api/show", cast_to=object, body={"model": model}, options={"max_retries": 0, "timeout": t}
            )
            return caps_mod.from_ollama_show(show)
        if kind == "lmstudio":
            try:
                listing = await client.get(
                    f"{root}/api/v1/models", cast_to=object, options={"max_retries": 0, "timeout": t}
                )
                found = caps_mod.from_lmstudio(listing, model)
                if found is not None:
                    return found
            except openai.APIStatusError:
                pass  # an LM Studio before 0.4: the v0 REST API
            listing = await client.get(
                f"{root}/api/v0/models", cast_to=object, options={"max_retries": 0, "timeout": t}
            )
            return caps_mod.from_lmstudio(listing, model)
        return None


class _Events:
    """The data events of one response body, one at a time."""

    def __init__(self, chunks: AsyncIterator[bytes], reader: SSEReader) -> None:
        self._chunks = chunks
        self._reader = reader
        self._queue: list[Event] = []
        self._ended = False
        self.first: Event | None = None

    async def next(self) -> Event | None:
        """The next event; None at the end of the body."""
        while not self._queue:
            if self._ended:
                return None
            try:
                chunk = await anext(self._chunks)
            except StopAsyncIteration:
                self._ended = True
                self._queue.extend(self._reader.finish())
                continue
            self._queue.extend(self._reader.feed(chunk))
        return self._queue.pop(0)


class _IdleWatch:
    """The idle budget of one stream: no data event for ``idle_s`` ends it (keep-alive comments are no progress).

    One loop timer at a time, moved on only when it fires early, instead of an ``asyncio.timeout`` per event:
    under qasync each of those is a Qt timer that stays registered until its deadline even when cancelled, so
    a long answer (40,000 events, a 60 s budget) piled up tens of thousands of live timers."""

    def __init__(self, idle_s: float) -> None:
        self.idle_s = idle_s
        self._loop = asyncio.get_running_loop()
        self._last = self._loop.time()
        self._waiter: asyncio.Task[Any] | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._expired = False

    async def next(self, events: _Events, reader: SSEReader) -> Event | None:
        """The next data event; :class:`_Timeout` when none came within the budget."""
        before = reader.comments
        task = asyncio.current_task()
        self._waiter = task
        if self._handle is None:
            self._handle = self._loop.call_at(self._last + self.idle_s, self._check)
        try:
            event = await events.next()
        except asyncio.CancelledError:
            if self._expired and task is not None and task.uncancel() == 0:  # ours, not a Stop
                raise _Timeout("idle", reader.comments - before) from None
            raise
        finally:
            self._waiter = None
        self._last = self._loop.time()
        return event

    def _check(self) -> None:
        self._handle = None
        due = self._last + self.idle_s
        if self._waiter is None:
            return  # between two reads: the next read arms it again
        if self._loop.time() >= due:
            self._expired = True
            self._waiter.cancel()
        else:
            self._handle = self._loop.call_at(due, self._check)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


def _parse(event: Event, url: str, assembler: StreamAssembler) -> dict[str, Any]:
    try:
        chunk = json.loads(event.data)
    except ValueError:
        chunk = None
    if not isinstance(chunk, dict):
        calls = assembler.calls.pending()
        not_run = f" Its {calls} tool call(s) were not run." if calls else ""
        raise ProviderError(
            "bad_data",
            f"{url} sent data that is not a valid stream chunk ({short(event.data, 80)!r}): the endpoint, or a proxy "
            f"in front of it, is broken.{not_run} Try again, or check the server.",
            partial=assembler.text,
            partial_reasoning=assembler.reasoning,
            dropped_calls=calls,
        )
    error = chunk.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else str(error)
        raise ProviderError(
            "server",
            f"{url} reported an error in the middle of the answer: {short(str(message))}",
            retryable=True,
            partial=assembler.text,
            partial_reasoning=assembler.reasoning,
        )
    return chunk


def _backoff(attempt: int, last: BaseException | None) -> float:
    if isinstance(last, openai.APIStatusError):
        headers = last.response.headers
        for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
            value = headers.get(name)
            if value:
                try:
                    return float(max(0.0, float(value) * scale))
                except ValueError:
                    pass
    return min(0.5 * 2.0**attempt, MAX_BACKOFF_S) * random.uniform(0.75, 1.0)


def _is_local(url: str) -> bool:
    return bool(re.match(r"https?://(localhost|127\.|\[::1\])", url))
