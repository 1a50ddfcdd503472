"""The loop's conversation-feature steps, kept out of loop.py: where a turn goes in the tree and its attachments
(recorded before the user's message), the usage of each request (the endpoint's, else estimated), and the
assistant's tool profile as per-round exposure blocks (so a tool outside it is neither offered nor run: the
dispatcher's boundary refuses it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from weclaw_desktop.agent import events as ev
from weclaw_desktop.agent.context import model_messages, tool_image_message
from weclaw_desktop.agent.turn_plan import TurnPlan
from weclaw_desktop.agent.usage import estimate_messages, estimate_text
from weclaw_desktop.toolkit.diagnostics import Code, Diagnostic
from weclaw_desktop.toolkit.registry import ToolRegistry

if TYPE_CHECKING:
    from weclaw_desktop.agent.history import HistoryStore

__all__ = ["TurnUsage", "outside_assistant", "record_start", "record_usage", "tool_image_message", "usage_of"]


async def record_start(history: HistoryStore, session_id: str, run_id: str, plan: TurnPlan) -> None:
    """Before the user's message is stored: the turn's place in the tree and its attachments.

    Raises KeyError when the chat does not exist (as ``begin_turn`` does)."""
    if await history.get_session(session_id) is None:
        raise KeyError(f"no session {session_id}")
    parent = plan.parent if plan.parent is not None else await history.branches.leaf(session_id)
    await history.branches.record(session_id, run_id, parent=parent, kind=plan.kind)
    await history.attachments.add(session_id, run_id, plan.attachments)


@dataclass(frozen=True)
class TurnUsage:
    prompt_tokens: int
    completion_tokens: int
    estimated: bool

    def event_fields(self, round_no: int, plan: TurnPlan) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "round": round_no,
            "estimated": self.estimated,
            "provider": plan.provider_name,
            "model": plan.model,
        }


def usage_of(completion: Any, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> TurnUsage:
    """The endpoint's usage of this request; estimated from what was sent and received when it sent none
    (or only zeros)."""
    u = completion.usage
    if u is not None and (u.prompt_tokens or u.completion_tokens):
        return TurnUsage(int(u.prompt_tokens), int(u.completion_tokens), False)
    received = completion.text or ""
    for c in completion.tool_calls:
        received += c.name + c.arguments
    received += getattr(completion, "reasoning", "") or ""
    return TurnUsage(estimate_messages(messages, tools), estimate_text(received), True)


async def record_usage(history: HistoryStore, turn: Any, usage: TurnUsage) -> None:
    await history.usage.add(
        turn.session_id,
        turn.run_id,
        turn.round_no,
        provider=turn.plan.provider_name,
        model=turn.plan.model,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        estimated=usage.estimated,
    )


def outside_assistant(registry: ToolRegistry, plan: TurnPlan) -> dict[str, Diagnostic]:
    """The tools the turn's assistant may not use, each with the reason (hidden this round, refused if called)."""
    allowed = plan.tool_allowed
    if allowed is None:
        return {}
    diagnostic = Diagnostic.of(Code.DISABLED_BY_ASSISTANT, "assistant", "assistant", assistant=plan.assistant)
    return {t: diagnostic for t in registry.tool_names() if not allowed(t)}


def show_tool_images(turn: Any) -> None:
    """Images the round's tools returned (a screenshot, an MCP picture) reach the model in the next round; a
    model that cannot see gets a note instead, and the user is told (``ImagesNotShown``)."""
    shown = turn.plan.vision is not False
    message = tool_image_message(turn.calls.round_files, show=shown, model=turn.plan.model)
    if message is None:
        return
    turn.messages.append(message)
    if not shown:
        files = [f for _fn, fs in turn.calls.round_files for f in fs]
        turn.emit(ev.ImagesNotShown, model=turn.plan.model, files=files)


async def history_for(turn: Any) -> list[dict[str, Any]]:
    """What the model is sent of the chat: the active branch, with attachments as text blocks and image parts."""
    return await model_messages(
        turn.loop.history,
        turn.session_id,
        max_chars=turn.opts.max_context_chars,
        vision=turn.plan.vision,
        model=turn.plan.model,
    )


async def report_usage(turn: Any, completion: Any, tools: Sequence[Mapping[str, Any]]) -> None:
    """Store and announce a request's tokens: the endpoint's figures, else an estimate (marked)."""
    usage = usage_of(completion, turn.messages, tools)
    await turn.durable(record_usage(turn.loop.history, turn, usage))
    turn.emit(ev.UsageReported, **usage.event_fields(turn.round_no, turn.plan))
