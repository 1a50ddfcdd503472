"""Everything that goes wrong with an endpoint becomes a :class:`ProviderError`: one line for the user and a kind.

kinds: ``auth`` | ``connection`` (unreachable, dropped) | ``timeout`` (no answer within the budget, or silence in
the middle of one) | ``incomplete`` (the stream ended without finishing: its tool calls are not run) |
``bad_data`` (the endpoint sent something that is not an OpenAI stream) | ``rate_limit`` | ``server`` |
``tools_unsupported`` | ``bad_request`` | ``not_configured`` | ``internal``.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import openai

from weclaw_desktop.toolkit.redact import redact

log = logging.getLogger("weclaw.provider")


class ProviderError(Exception):
    """A request failed. ``message`` is one line for the user; ``kind`` is for the UI and exit codes."""

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        partial: str = "",
        partial_reasoning: str = "",
        dropped_calls: int = 0,
    ) -> None:
        super().__init__(message)
        self.partial = partial  # text already streamed when the stream failed
        self.partial_reasoning = partial_reasoning
        self.dropped_calls = dropped_calls  # tool calls of a broken stream, not run
        self.kind = kind
        self.message = message
        self.retryable = retryable
        self.status = status


_TOOLS_REJECTED = re.compile(r"tool|function", re.IGNORECASE)
_FIELD_REJECTED = re.compile(
    r"unrecogni[sz]ed|unknown|not allowed|not permitted|unexpected|additional propert|extra (field|input)|"
    r"extra_forbidden|invalid field",
    re.IGNORECASE,
)


def server_message(exc: BaseException) -> str:
    """The endpoint's own error text (OpenAI shape, a bare string, or Gemini's list of errors)."""
    body: Any = getattr(exc, "body", None)
    if isinstance(body, list) and body:
        body = body[0]
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
    return str(getattr(exc, "message", None) or exc)


def short(text: str, limit: int = 200) -> str:
    line = " ".join(redact(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def rejects_field(exc: openai.OpenAIError, names: set[str]) -> bool:
    """Whether a 400/422 says that one of ``names`` (fields we added to messages) is not accepted."""
    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in (400, 422):
        return False
    detail = server_message(exc)
    return _FIELD_REJECTED.search(detail) is not None and any(name in detail for name in names)


def classify(exc: openai.OpenAIError, *, url: str, model: str, sent_tools: bool) -> ProviderError:
    status = getattr(exc, "status_code", None)
    detail = server_message(exc)
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
        return ProviderError("timeout", f"{url} did not answer in time. Try again.", retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        return ProviderError(
            "connection",
            f"Cannot reach {url} ({short(detail)}). Check the address and your network.",
            retryable=True,
        )
    if isinstance(exc, openai.APIStatusError):
        if sent_tools and status in (400, 404, 422, 501) and _TOOLS_REJECTED.search(detail):
            return ProviderError(
                "tools_unsupported",
                f"The model '{model}' at {url} does not accept tools (function calling): "
                f"{short(detail)}. Choose a model that supports tool calling.",
                status=status,
            )
        if status == 404:
            return ProviderError(
                "bad_request",
                f"Not found (404): the model '{model}' or the base URL {url} is wrong. {short(detail)}",
                status=status,
            )
        if status is not None and status >= 500:
            return ProviderError(
                "server", f"The endpoint failed ({status}): {short(detail)}. Try again later.", retryable=True
            )
        return ProviderError("bad_request", f"The endpoint refused the request ({status}): {short(detail)}")
    if isinstance(exc, openai.APIResponseValidationError):
        return ProviderError("bad_data", f"{url} sent an answer that is not OpenAI-compatible: {short(detail)}")
    return ProviderError("internal", f"{type(exc).__name__}: {short(detail)}")


def dropped(url: str, partial: str, reasoning: str = "", calls: int = 0) -> ProviderError:
    got = " after part of the answer" if partial or reasoning else ""
    not_run = f" Its {calls} tool call(s) were not run." if calls else ""
    return ProviderError(
        "connection",
        f"The connection to {url} dropped{got}.{not_run} Send the message again to retry.",
        retryable=True,
        partial=partial,
        partial_reasoning=reasoning,
        dropped_calls=calls,
    )
