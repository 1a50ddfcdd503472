"""The tool system core: contract, manifest, registry, availability, policy, planner, exposure, dispatcher,
outcomes."""

from weclaw_desktop.toolkit.approval import (
    ApprovalDecision,
    ApprovalGate,
    ApprovalPolicy,
    ApprovalRequest,
    ApprovalResult,
    AutoApprove,
    AutoDeny,
    DecidedBy,
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
    ToolEnv,
    ToolError,
    ToolResult,
    ToolStatus,
    action,
)
from weclaw_desktop.toolkit.diagnostics import Code, Diagnostic
from weclaw_desktop.toolkit.dispatcher import Dispatcher, Stage, StageEvent, ToolCall
from weclaw_desktop.toolkit.exposure import NO_ROUND, Exposure, ExposurePlanner, NoRound, Offered, Router, Routing
from weclaw_desktop.toolkit.hooks import BeforeOutcome, HookCall, Hooks
from weclaw_desktop.toolkit.manifest import Manifest, ManifestError, ToolSpec, load_manifest
from weclaw_desktop.toolkit.outcome import CallOutcome, ErrorKind
from weclaw_desktop.toolkit.planner import ContractError, Plan, plan
from weclaw_desktop.toolkit.policy import Policy
from weclaw_desktop.toolkit.registry import FunctionRef, RegistryError, ToolLoadError, ToolRegistry

__all__ = [
    "NO_ROUND",
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
    "CallOutcome",
    "Code",
    "ContractError",
    "DecidedBy",
    "Diagnostic",
    "Dispatcher",
    "EmptyConfig",
    "ErrorKind",
    "Exposure",
    "ExposurePlanner",
    "FunctionRef",
    "HookCall",
    "Hooks",
    "Manifest",
    "ManifestError",
    "MemoryAudit",
    "NoParams",
    "NoRound",
    "Offered",
    "Origin",
    "Plan",
    "Policy",
    "RegistryError",
    "Risk",
    "Router",
    "Routing",
    "SessionApprovals",
    "Stage",
    "StageEvent",
    "ToolCall",
    "ToolContext",
    "ToolEnv",
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
