"""The approval request of one call: its effects (tools.json), the ones that ask because untrusted content
is in the conversation, its paths (folder scopes) and its MCP server (server scopes). The dispatcher's
approval step builds it here, so the dispatcher only sequences the pipeline."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from weclaw_desktop.toolkit.approval import ApprovalRequest
from weclaw_desktop.toolkit.base import Risk, ToolContext
from weclaw_desktop.toolkit.effects import SafetyModel
from weclaw_desktop.toolkit.manifest import LocalizedText
from weclaw_desktop.toolkit.pathclass import within
from weclaw_desktop.toolkit.provenance import Provenance, UntrustedSource
from weclaw_desktop.toolkit.registry import FunctionRef

#: The provenance of a model round whose caller passed none: unknown, so it counts as untrusted.
UNKNOWN_SOURCE = UntrustedSource(
    function="",
    label=LocalizedText(en="has content of unknown origin", zh="含有来源不明的内容"),
)


def base_folder(ctx: ToolContext) -> Path:
    """Where a relative path argument points (as pathguard resolves it): home, unless home is not allowed."""
    home = Path(os.path.expanduser("~"))
    roots = [Path(os.path.expanduser(str(r))) for r in ctx.allowed_roots]
    if not roots or any(within(home, r) for r in roots):
        return home
    return roots[0]


def approval_request(
    safety: SafetyModel,
    call_id: str,
    function: str,
    ref: FunctionRef,
    arguments: dict[str, Any],
    risk: Risk,
    ctx: ToolContext,
    provenance: Provenance | None,
) -> ApprovalRequest:
    """The approval request with the call's effects, and those that ask because of untrusted content."""
    base = base_folder(ctx)
    effects = safety.effects(ref.tool, ref.action, arguments, provenance, base=base)
    gated = safety.gated(effects, provenance)
    decl = safety.declaration(ref.tool, ref.action)
    paths = tuple(str(safety.classifier.spellings(p, base)[0]) for p in safety.path_values(decl, arguments))
    spec = safety.registry.spec(ref.tool)
    server = str(spec.config.get("server", "")) if spec.display.category == "mcp" else ""
    return ApprovalRequest(
        tool=ref.tool,
        action=ref.action,
        function=function,
        arguments=arguments,
        risk=risk,
        origin=ctx.origin,
        session_id=ctx.session_id,
        call_id=call_id,
        effects=tuple(effects),
        gated=tuple(gated),
        sources=tuple(provenance.sources) if gated and provenance is not None else (),
        paths=paths,
        mcp_server=server,
    )
