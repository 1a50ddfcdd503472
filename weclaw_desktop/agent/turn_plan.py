"""What one turn is made of beyond its text: who answers (provider configuration, model, what it can do), which
assistant (its prompt, the tools it may use, its generation settings), where the turn goes in the conversation
tree (a new message, an edit, a regeneration) and the files sent with it. The runtime resolves it from the chat's
setup and the settings (:meth:`AgentRuntime.plan_turn`); the loop only follows it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from weclaw_desktop.agent.history_branches import BranchKind
from weclaw_desktop.attachments import Attachment

if TYPE_CHECKING:
    from weclaw_desktop.agent.provider import Provider


@dataclass(frozen=True)
class TurnPlan:
    provider: Provider | None = None  # None: the loop's default provider
    provider_name: str = ""  # the saved configuration's name (stored with the usage)
    model: str = ""
    vision: bool | None = None  # can the model see images (None: unknown, images are sent)
    assistant: str = ""  # the assistant's name (for the model-facing refusal of a tool outside its profile)
    prompt_extra: str = ""  # the assistant's system prompt and the chat's custom instructions
    tool_allowed: Callable[[str], bool] | None = None  # the assistant's tool profile (None: every tool)
    params: Mapping[str, Any] = field(default_factory=dict)  # generation settings (temperature, ...)
    parent: str | None = None  # the turn this one follows; None: the end of the active branch
    kind: BranchKind = "new"
    attachments: tuple[Attachment, ...] = ()


def compose_prompt(base: str, plan: TurnPlan) -> str:
    return f"{base}\n\n{plan.prompt_extra}" if plan.prompt_extra else base


def prompt_extra(assistant_name: str, system_prompt: str, instructions: str) -> str:
    """The assistant's own prompt and the chat's custom instructions, each under a heading the model can tell apart."""
    parts = []
    if system_prompt.strip():
        parts.append(f'You are acting as the assistant "{assistant_name}". Its instructions:\n{system_prompt.strip()}')
    if instructions.strip():
        parts.append(f"The user's instructions for this conversation:\n{instructions.strip()}")
    return "\n\n".join(parts)
