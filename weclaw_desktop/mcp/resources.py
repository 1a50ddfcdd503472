"""Resources and prompts of a server, for the model (an action) and for the composer (an API).

- The model reads a resource through the action ``read_resource`` of the server's tool (offered when the
  server has resources; named ``weclaw_read_resource`` if the server has a tool of that name). Its
  description lists the resources and templates, so the model knows what there is.
- The composer attaches a resource to a message (:func:`attachment`: its text, or the file it was
  saved to) and turns a server prompt into the messages it stands for (:func:`prompt_messages`), after
  asking for its arguments (:func:`prompt_fields`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import mcp_types as types
from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.mcp.convert import _decode, _Saver, _sniff
from weclaw_desktop.toolkit.base import ToolResult
from weclaw_desktop.toolkit.redact import redact

RESOURCE_ACTION = "read_resource"
RESOURCE_ACTION_FALLBACK = "weclaw_read_resource"
MAX_LISTED = 30  # resources named in the action's description


class ReadResourceParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    uri: str = Field(min_length=1, description="The resource's URI, e.g. one listed above or a template filled in")


def describe(server: str, resources: list[types.Resource], templates: list[types.ResourceTemplate]) -> str:
    """The action's description: what it does and which resources there are."""
    listed = []
    for r in resources[:MAX_LISTED]:
        about = f" ({r.description})" if r.description else ""
        listed.append(f"{r.uri}{about}")
    if len(resources) > MAX_LISTED:
        listed.append(f"and {len(resources) - MAX_LISTED} more")
    text = f"Read a resource of the MCP server '{server}' by its URI."
    if listed:
        text += " Resources: " + "; ".join(listed) + "."
    if templates:
        text += " URI templates (fill in the {...} parts): " + "; ".join(t.uri_template for t in templates[:10]) + "."
    return " ".join(text.split())[:1024]


@dataclass
class Attachment:
    """A resource as the composer attaches it: text for the message, files saved from binary parts."""

    uri: str
    text: str
    files: list[Path] = field(default_factory=list)
    images: list[Path] = field(default_factory=list)


async def attachment(result: types.ReadResourceResult, *, label: str, outputs_dir: Path) -> Attachment:
    saver = _Saver(label, outputs_dir)
    parts: list[str] = []
    uri = ""
    for content in result.contents:
        uri = uri or str(content.uri)
        if isinstance(content, types.TextResourceContents):
            parts.append(redact(content.text))
        else:
            raw = _decode(content.blob)
            if raw is None:
                parts.append(f"[{content.uri}: undecodable data]")
                continue
            path = await saver.save(raw, content.mime_type or _sniff(raw))
            parts.append(f"[{content.mime_type or 'binary'} saved to {path}]")
    return Attachment(uri=uri, text="\n".join(parts), files=saver.files, images=saver.images)


async def read_for_model(result: types.ReadResourceResult, *, label: str, outputs_dir: Path) -> ToolResult:
    got = await attachment(result, label=label, outputs_dir=outputs_dir)
    return ToolResult.ok(got.text or "(the resource is empty)", files=got.files, images=got.images)


@dataclass(frozen=True)
class PromptField:
    name: str
    description: str
    required: bool


def prompt_fields(prompt: types.Prompt) -> list[PromptField]:
    return [PromptField(a.name, a.description or "", bool(a.required)) for a in prompt.arguments or []]


def prompt_messages(result: types.GetPromptResult) -> list[tuple[str, str]]:
    """(role, text) of a prompt's messages; non-text parts are named, resources inlined as text."""
    out: list[tuple[str, str]] = []
    for message in result.messages:
        content = message.content
        if isinstance(content, types.TextContent):
            text = content.text
        elif isinstance(content, types.EmbeddedResource) and isinstance(content.resource, types.TextResourceContents):
            text = f"[resource {content.resource.uri}]\n{content.resource.text}"
        else:
            text = f"[{getattr(content, 'type', 'content')} not shown]"
        out.append((message.role, redact(text)))
    return out
