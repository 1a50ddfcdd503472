"""Model capabilities (tools, vision, reasoning, context length): from the endpoint where it tells, from the
profile where known, from the user above both.

Endpoints that tell (the profile's ``models.capabilities``):

- OpenRouter ``GET /models``: ``supported_parameters`` (``tools``, ``reasoning``), ``architecture.input_modalities``
  (``image``) and ``context_length`` per model;
- Ollama ``POST /api/show``: ``capabilities`` (``tools``, ``thinking``, ``vision``) and ``model_info``'s
  ``<arch>.context_length``;
- LM Studio ``GET /api/v1/models`` (``capabilities.trained_for_tool_use`` / ``vision``, ``max_context_length``),
  or the older ``GET /api/v0/models`` (``type`` vlm, ``capabilities`` [``tool_use``]).

Each field is resolved on its own: the user's value, else the endpoint's, else the profile's, else unknown. A
model is treated as *without tools* only when some source says so (unknown never withholds tools).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from weclaw_desktop.agent.provider.profiles import Capabilities

Source = Literal["you", "endpoint", "profile", "unknown"]
FIELDS = ("tools", "vision", "reasoning", "context")


@dataclass(frozen=True)
class ModelCapabilities:
    model: str
    caps: Capabilities
    sources: dict[str, Source] = field(default_factory=dict)

    @property
    def tools_withheld(self) -> bool:
        return self.caps.tools is False

    def source(self, name: str) -> Source:
        return self.sources.get(name, "unknown")

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, **self.caps.model_dump(), "sources": dict(self.sources)}


def resolve(
    model: str, *, user: Capabilities | None, endpoint: Capabilities | None, profile: Capabilities
) -> ModelCapabilities:
    values: dict[str, Any] = {}
    sources: dict[str, Source] = {}
    layers: list[tuple[Source, Capabilities | None]] = [("you", user), ("endpoint", endpoint), ("profile", profile)]
    for name in FIELDS:
        for source, caps in layers:
            value = getattr(caps, name) if caps is not None else None
            if value is not None:
                values[name] = value
                sources[name] = source
                break
    return ModelCapabilities(model, Capabilities(**values), sources)


# --- what endpoints report ---------------------------------------------------------------------------
def from_openrouter(listing: Any, model: str) -> Capabilities | None:
    """The entry of ``model`` in OpenRouter's ``GET /models`` answer."""
    data = listing.get("data") if isinstance(listing, dict) else None
    for entry in data or []:
        if not isinstance(entry, dict) or entry.get("id") != model:
            continue
        params = entry.get("supported_parameters")
        arch = entry.get("architecture") if isinstance(entry.get("architecture"), dict) else {}
        inputs = arch.get("input_modalities") if isinstance(arch, dict) else None
        ctx = entry.get("context_length")
        return Capabilities(
            tools=("tools" in params) if isinstance(params, list) else None,
            reasoning=("reasoning" in params or "include_reasoning" in params) if isinstance(params, list) else None,
            vision=("image" in inputs) if isinstance(inputs, list) else None,
            context=int(ctx) if isinstance(ctx, int) and ctx > 0 else None,
        )
    return None


def from_ollama_show(show: Any) -> Capabilities | None:
    """Ollama's ``POST /api/show`` answer for one model."""
    if not isinstance(show, dict):
        return None
    caps = show.get("capabilities")
    context = None
    info = show.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            if key.endswith(".context_length") and isinstance(value, int) and value > 0:
                context = value
                break
    if not isinstance(caps, list):
        return Capabilities(context=context) if context else None
    return Capabilities(tools="tools" in caps, vision="vision" in caps, reasoning="thinking" in caps, context=context)


def from_lmstudio(listing: Any, model: str) -> Capabilities | None:
    """LM Studio's ``/api/v1/models`` (``models``) or ``/api/v0/models`` (``data``) answer."""
    if not isinstance(listing, dict):
        return None
    for entry in listing.get("models") or []:  # v1
        if isinstance(entry, dict) and model in (entry.get("key"), entry.get("id")):
            caps = entry.get("capabilities") if isinstance(entry.get("capabilities"), dict) else {}
            ctx = entry.get("max_context_length")
            tools = caps.get("trained_for_tool_use") if isinstance(caps, dict) else None
            vision = caps.get("vision") if isinstance(caps, dict) else None
            return Capabilities(
                tools=tools if isinstance(tools, bool) else None,
                vision=vision if isinstance(vision, bool) else None,
                reasoning=caps.get("thinking")
                if isinstance(caps, dict) and isinstance(caps.get("thinking"), bool)
                else None,
                context=ctx if isinstance(ctx, int) and ctx > 0 else None,
            )
    for entry in listing.get("data") or []:  # v0
        if isinstance(entry, dict) and entry.get("id") == model:
            caps_list = entry.get("capabilities")
            ctx = entry.get("max_context_length")
            return Capabilities(
                tools=("tool_use" in caps_list) if isinstance(caps_list, list) else None,
                vision=(entry.get("type") == "vlm") if entry.get("type") in ("llm", "vlm") else None,
                context=ctx if isinstance(ctx, int) and ctx > 0 else None,
            )
    return None
