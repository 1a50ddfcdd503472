"""The tool system core: contract, manifest, registry, availability, policy, planner, dispatcher."""

from weclaw_desktop.toolkit.approval import (
    ApprovalDecision,
    ApprovalGate,
    ApprovalPolicy,
    ApprovalRequest,
    ApprovalResult,
    AutoApprove,
    AutoDeny,
    SessionApprovals,
)
from weclaw_desktop.toolkit.audit import AuditRecord, AuditSink, MemoryAudit
from weclaw_desktop.toolkit.availability import AvailabilityContext
from weclaw_desktop.toolkit.base import (
    ActionDef,
    BaseTool,
    BridgeMissingError,
    EmptyConfig,
    NoParams,
    Origin,
    Risk,
    ToolContext,
    ToolError,
    ToolResult,
    ToolStatus,
    action,
)
from weclaw_desktop.toolkit.diagnostics import Code, Diagnostic
from weclaw_desktop.toolkit.dispatcher import Dispatcher, Stage, StageEvent, ToolCall
from weclaw_desktop.toolkit.hooks import BeforeOutcome, HookCall, Hooks
from weclaw_desktop.toolkit.manifest import Manifest, ManifestError, ToolSpec, load_manifest
from weclaw_desktop.toolkit.planner import ContractError, Plan, plan
from weclaw_desktop.toolkit.policy import Policy
from weclaw_desktop.toolkit.registry import FunctionRef, RegistryError, ToolLoadError, ToolRegistry

__all__ = [
    "ActionDef",
    "ApprovalDecision",
    "ApprovalGate",
    "ApprovalPolicy",
    "ApprovalRequest",
    "ApprovalResult",
    "AuditRecord",
    "AuditSink",
    "AutoApprove",
    "AutoDeny",
    "AvailabilityContext",
    "BaseTool",
    "BeforeOutcome",
    "BridgeMissingError",
    "Code",
    "ContractError",
    "Diagnostic",
    "Dispatcher",
    "EmptyConfig",
    "FunctionRef",
    "HookCall",
    "Hooks",
    "Manifest",
    "ManifestError",
    "MemoryAudit",
    "NoParams",
    "Origin",
    "Plan",
    "Policy",
    "RegistryError",
    "Risk",
    "SessionApprovals",
    "Stage",
    "StageEvent",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolLoadError",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "ToolStatus",
    "action",
    "load_manifest",
    "plan",
]
