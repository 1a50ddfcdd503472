"""The request body of one streamed completion: messages per the profile, thinking controls, rejected parameters."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from weclaw_desktop.agent.provider.messages import outbound
from weclaw_desktop.agent.provider.profiles import Profile, ThinkingControls

ThinkingMode = Literal["default", "on", "off"]


@dataclass(frozen=True)
class ThinkingChoice:
    """What the user chose: the endpoint's default, on, or off; and an effort level ('' = the endpoint's)."""

    mode: ThinkingMode = "default"
    effort: str = ""


class ThinkingUnsupported(ValueError):
    """The profile has no documented way to do what was asked (switch thinking off, set this effort)."""


def check_thinking(controls: ThinkingControls, choice: ThinkingChoice, provider: str) -> None:
    """Raise :class:`ThinkingUnsupported` with a one-line reason when ``choice`` cannot be sent."""
    if choice.mode == "off" and not controls.can_disable:
        raise ThinkingUnsupported(f"{provider} has no documented way to switch thinking off")
    if choice.effort:
        if not controls.effort_path:
            raise ThinkingUnsupported(f"{provider} has no thinking effort setting")
        if controls.efforts and choice.effort not in controls.efforts:
            allowed = ", ".join(controls.efforts)
            raise ThinkingUnsupported(f"{provider} accepts the thinking efforts {allowed}, not '{choice.effort}'")


def thinking_body(controls: ThinkingControls, choice: ThinkingChoice) -> dict[str, Any]:
    """The body fields for ``choice`` (nothing for the endpoint's default)."""
    body: dict[str, Any] = {}
    if choice.mode == "off":
        if controls.off is not None:
            deep_merge(body, controls.off)
        return body
    if choice.mode == "on" or choice.effort:
        deep_merge(body, controls.on)
    if choice.effort and controls.effort_path:
        set_path(body, controls.effort_path, choice.effort)
    return body


def build_body(
    profile: Profile,
    *,
    model: str,
    messages: Sequence[dict[str, Any]],
    tools: Sequence[dict[str, Any]],
    thinking: ThinkingChoice,
    source: str,
    echo: bool,
    stream_usage: bool,
    params: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {**(params or {})}  # generation settings first: nothing below may be overridden by them
    body.update(model=model, messages=outbound(messages, profile, source=source, echo=echo))
    body["stream"] = True
    if tools:
        body["tools"] = list(tools)
    if stream_usage and profile.stream_usage:
        body["stream_options"] = {"include_usage": True}
    deep_merge(body, thinking_body(profile.thinking, thinking))
    for name in profile.rejects:
        body.pop(name, None)
    return body


def deep_merge(target: dict[str, Any], extra: dict[str, Any]) -> None:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            deep_merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


def set_path(target: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    node = target
    for name in parents:
        child = node.get(name)
        if not isinstance(child, dict):
            child = node[name] = {}
        node = child
    node[last] = value
