"""The SDK session callbacks of one server, built from the client's :class:`ClientHooks`.

Elicitation, sampling and roots are answered through the hooks (a part without a hook is not passed to
the SDK, so it is not advertised); log notifications go to the ``weclaw.mcp.<server>`` logger (and so the
app's log) and to ``on_log``. Everything a server sends is redacted before it reaches a log.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import mcp_types as types
from mcp.client.session import ClientRequestContext

from weclaw_desktop.mcp.interact import (
    ClientHooks,
    ElicitAnswer,
    FormRequest,
    SamplingRequest,
    UrlRequest,
    form_fields,
)
from weclaw_desktop.toolkit.redact import redact

#: MCP log levels -> Python logging levels.
LEVELS: dict[str, int] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}
DECLINED = -32001  # the JSON-RPC error a declined sampling request gets


def _text_of(content: Any) -> str:
    blocks = content if isinstance(content, list) else [content]
    parts = []
    for block in blocks:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        else:
            parts.append(f"[{getattr(block, 'type', 'content')} not shown]")
    return "\n".join(parts)


def sampling_request(server: str, params: types.CreateMessageRequestParams) -> SamplingRequest:
    hints = tuple(h.name for h in (params.model_preferences.hints or []) if h.name) if params.model_preferences else ()
    return SamplingRequest(
        server=server,
        messages=tuple((m.role, _text_of(m.content)) for m in params.messages),
        system_prompt=params.system_prompt or "",
        max_tokens=params.max_tokens,
        temperature=params.temperature,
        model_hints=hints,
        stop=tuple(params.stop_sequences or ()),
    )


def session_callbacks(server: str, hooks: ClientHooks | None) -> dict[str, Any]:
    """Keyword arguments for ``ClientSession`` (only the callbacks the hooks can answer)."""
    out: dict[str, Any] = {"logging_callback": _logger(server, hooks)}
    if hooks is None:
        return out
    user, sampler, roots = hooks.user, hooks.sampler, hooks.roots
    if user is not None:

        async def elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
            request: FormRequest | UrlRequest
            if isinstance(params, types.ElicitRequestURLParams):
                request = UrlRequest(server=server, message=params.message, url=params.url)
            else:
                schema = params.requested_schema
                raw = schema if isinstance(schema, dict) else schema.model_dump(by_alias=True, exclude_none=True)
                request = FormRequest(server=server, message=params.message, fields=form_fields(raw), schema=raw)
            answer: ElicitAnswer = await user.elicit(request)
            content = answer.content if answer.action == "accept" and isinstance(request, FormRequest) else None
            return types.ElicitResult(action=answer.action, content=content)

        out["elicitation_callback"] = elicit
    if user is not None and sampler is not None:

        async def sample(
            context: ClientRequestContext, params: types.CreateMessageRequestParams
        ) -> types.CreateMessageResult | types.ErrorData:
            request = sampling_request(server, params)
            if not await user.approve_sampling(request):
                return types.ErrorData(code=DECLINED, message="The user declined this sampling request.")
            try:
                answer = await sampler.sample(request)
            except Exception as exc:  # the provider failed: the server gets an error, the turn goes on
                return types.ErrorData(code=types.INTERNAL_ERROR, message=redact(f"sampling failed: {exc}"))
            return types.CreateMessageResult(
                role="assistant",
                content=types.TextContent(type="text", text=answer.text),
                model=answer.model,
                stop_reason=answer.stop_reason,
            )

        out["sampling_callback"] = sample
    if roots is not None:

        async def list_roots(context: ClientRequestContext) -> types.ListRootsResult:
            return types.ListRootsResult(
                roots=[types.Root(uri=path.resolve().as_uri(), name=path.name or str(path)) for path in roots()]
            )

        out["list_roots_callback"] = list_roots
    return out


def _logger(server: str, hooks: ClientHooks | None) -> Any:
    logger = logging.getLogger(f"weclaw.mcp.{server}")

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        data = params.data if isinstance(params.data, str) else json.dumps(params.data, ensure_ascii=False, default=str)
        text = redact(data)
        origin = f"{params.logger}: " if params.logger else ""
        logger.log(LEVELS.get(params.level, logging.INFO), "%s%s", origin, text)
        if hooks is not None and hooks.on_log is not None:
            hooks.on_log(server, params.level, text)

    return on_log
