"""The dispatcher: one path for every tool call, built-in, plugin or MCP.

function name -> (tool, action) -> availability and policy -> parse JSON arguments -> validate ->
approval -> before hooks -> execute with the tool's timeout and concurrency limit -> after hooks -> audit.

Every failure becomes a :class:`ToolResult` whose text tells the model what to do next; the full
exception goes to the log. Cancellation is recorded in the audit and re-raised.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ValidationError

from weclaw_desktop.toolkit.approval import (
    ApprovalDecision,
    ApprovalGate,
    ApprovalPolicy,
    ApprovalRequest,
    ApprovalResult,
    SessionApprovals,
)
from weclaw_desktop.toolkit.audit import AuditRecord, AuditSink, StartedAuditSink, summarize_error
from weclaw_desktop.toolkit.availability import AvailabilityContext
from weclaw_desktop.toolkit.base import (
    BridgeMissingError,
    Risk,
    ToolContext,
    ToolError,
    ToolResult,
    ToolStatus,
)
from weclaw_desktop.toolkit.hooks import HookCall, Hooks
from weclaw_desktop.toolkit.jsonargs import ArgumentsError, parse_arguments
from weclaw_desktop.toolkit.planner import diagnose, diagnose_action
from weclaw_desktop.toolkit.policy import Policy
from weclaw_desktop.toolkit.registry import FunctionRef, ToolLoadError, ToolRegistry

log = logging.getLogger("weclaw.dispatch")

MAX_LISTED_NAMES = 40


@dataclass(frozen=True)
class ToolCall:
    """A call the model asked for: ``arguments`` is the raw JSON text it sent."""

    id: str
    name: str
    arguments: str


class Stage(StrEnum):
    AWAITING_APPROVAL = "awaiting_approval"
    APPROVED = "approved"
    DENIED = "denied"
    STARTED = "started"
    FINISHED = "finished"


@dataclass(frozen=True)
class StageEvent:
    stage: Stage
    call: ToolCall
    ref: FunctionRef | None
    arguments: dict[str, Any] | None = None
    risk: Risk | None = None
    result: ToolResult | None = None
    approval: ApprovalResult | None = None


Observer = Callable[[StageEvent], None]


@dataclass
class _Outcome:
    """What the pipeline knows so far, for the audit record."""

    ref: FunctionRef | None = None
    approval: ApprovalResult | None = None
    audit_row: Any = None  # the audit sink's token of the row written when the call started
    started: float = field(default_factory=time.time)
    t0: float = field(default_factory=time.perf_counter)


class Dispatcher:
    def __init__(
        self,
        registry: ToolRegistry,
        *,
        policy: Policy | None = None,
        approval_policy: ApprovalPolicy | None = None,
        session_approvals: SessionApprovals | None = None,
        hooks: Hooks | None = None,
        audit: AuditSink | None = None,
        availability: Callable[[], AvailabilityContext] | None = None,
        gate: ApprovalGate | None = None,
    ) -> None:
        self.registry = registry
        self.policy = policy or Policy()
        self.approval_policy = approval_policy or ApprovalPolicy()
        self.session_approvals = session_approvals or SessionApprovals()
        self.hooks = hooks or Hooks()
        self.audit = audit
        self.availability = availability or AvailabilityContext
        self.gate = gate
        self._semaphores: dict[str, asyncio.Semaphore] = {}

    async def dispatch(
        self,
        call: ToolCall,
        ctx: ToolContext,
        *,
        callable_functions: Sequence[str] | None = None,
        observer: Observer | None = None,
    ) -> ToolResult:
        """Run one call through the whole pipeline. Never raises except for cancellation."""
        notify = observer or (lambda event: None)
        state = _Outcome()
        try:
            result = await self._pipeline(call, ctx, state, callable_functions, notify)
        except asyncio.CancelledError:
            result = ToolResult.fail("The call was cancelled by the user.", status=ToolStatus.CANCELLED)
            self._finish(result, state)
            await self._audit(call, ctx, state, result)
            notify(StageEvent(Stage.FINISHED, call, state.ref, result=result))
            raise
        self._finish(result, state)
        await self._audit(call, ctx, state, result)
        notify(StageEvent(Stage.FINISHED, call, state.ref, result=result))
        return result

    @staticmethod
    def _finish(result: ToolResult, state: _Outcome) -> None:
        result.duration_ms = round((time.perf_counter() - state.t0) * 1000, 3)

    async def _pipeline(
        self,
        call: ToolCall,
        ctx: ToolContext,
        state: _Outcome,
        callable_functions: Sequence[str] | None,
        notify: Observer,
    ) -> ToolResult:
        ref = self.registry.resolve(call.name)
        if ref is None:
            return self._unknown_function(call.name, callable_functions)
        state.ref = ref

        availability = self._availability()
        problems = diagnose(self.registry, self.policy, availability, ref.tool) or diagnose_action(
            self.registry, availability, ref.tool, ref.action
        )
        if problems:
            status = ToolStatus.DENIED if problems[0].code.value.startswith("disabled-") else ToolStatus.ERROR
            reasons = " ".join(str(p) for p in problems)
            return ToolResult.fail(
                f"{call.name} is not available right now: {reasons} "
                "Do not call it again in this conversation; tell the user what is needed.",
                status=status,
            )

        try:
            action_def = self.registry.action_def(ref.tool, ref.action)
        except ToolLoadError as exc:
            log.error("cannot load %s: %s", ref.tool, exc)
            return ToolResult.fail(f"{call.name} is broken on this installation ({exc}). Use another tool.")

        parsed = _parse_arguments(call.arguments)
        if isinstance(parsed, str):
            return ToolResult.fail(
                f"The arguments of {call.name} are not valid JSON ({parsed}). "
                "Send one JSON object that matches the function's parameters and call again."
            )
        params = _validate(action_def.params, parsed)
        if isinstance(params, list):
            return _invalid(call.name, params)

        risk = self.registry.risk_of(ref.tool, ref.action)
        request = ApprovalRequest(
            tool=ref.tool,
            action=ref.action,
            function=call.name,
            arguments=parsed,
            risk=risk,
            origin=ctx.origin,
            session_id=ctx.session_id,
            call_id=call.id,
        )
        approval = await self._approve(request, ctx, call, ref, notify, forced_reason=None)
        state.approval = approval
        if not approval.decision.allowed:
            return _denied(call.name, approval)

        hook_call = HookCall(ref.tool, ref.action, call.name, parsed, risk, ctx)
        for hook_name, before in self.hooks.before_for(call.name):
            outcome = await before(hook_call)
            if outcome is None:
                continue
            if outcome.block is not None:
                state.approval = ApprovalResult(ApprovalDecision.DENY, decided_by=f"hook:{hook_name}")
                return ToolResult.fail(outcome.block, status=ToolStatus.DENIED)
            if outcome.arguments is not None:
                rewritten = _validate(action_def.params, outcome.arguments)
                if isinstance(rewritten, list):
                    return ToolResult.fail(f"Hook '{hook_name}' produced invalid arguments: {'; '.join(rewritten)}")
                params = rewritten
                hook_call.arguments = dict(outcome.arguments)
            if outcome.require_approval is not None and approval.decided_by != "user":
                approval = await self._approve(request, ctx, call, ref, notify, forced_reason=outcome.require_approval)
                state.approval = approval
                if not approval.decision.allowed:
                    return _denied(call.name, approval)

        notify(StageEvent(Stage.STARTED, call, ref, arguments=hook_call.arguments, risk=risk))
        state.audit_row = await self._audit_begin(call, ctx, state)
        result = await self._execute(ref, params, ctx, call.name)

        for hook_name, after in self.hooks.after_for(call.name):
            replaced = await after(hook_call, result)
            if replaced is not None:
                if not isinstance(replaced, ToolResult):
                    raise TypeError(f"after hook {hook_name} returned {type(replaced).__name__}")
                result = replaced
        return result

    def _availability(self) -> AvailabilityContext:
        from dataclasses import replace

        base = self.availability()
        return replace(
            base,
            bridges=base.bridges | self.registry.bridge_names(),
            tool_config=self.registry.config_view,
        )

    async def _approve(
        self,
        request: ApprovalRequest,
        ctx: ToolContext,
        call: ToolCall,
        ref: FunctionRef,
        notify: Observer,
        *,
        forced_reason: str | None,
    ) -> ApprovalResult:
        if forced_reason is None:
            rule = self.approval_policy.rule_for(request)
            if rule == "deny":
                return ApprovalResult(ApprovalDecision.DENY, decided_by="policy", note="denied by policy")
            if rule == "allow":
                return ApprovalResult(ApprovalDecision.ALLOW_ONCE, decided_by="policy")
            if call.name in self.approval_policy.remembered:
                return ApprovalResult(ApprovalDecision.ALLOW_ONCE, decided_by="remembered")
            if self.session_approvals.is_allowed(ctx.session_id, call.name):
                return ApprovalResult(ApprovalDecision.ALLOW_ONCE, decided_by="session")
        else:
            request = ApprovalRequest(**{**request.__dict__, "reason": forced_reason})
        gate = ctx.approval or self.gate
        if gate is None:
            return ApprovalResult(ApprovalDecision.DENY, decided_by="no-gate", note="no one is there to approve it")
        notify(StageEvent(Stage.AWAITING_APPROVAL, call, ref, arguments=request.arguments, risk=request.risk))
        result = await gate.request(request)
        if result.decision is ApprovalDecision.ALLOW_SESSION:
            self.session_approvals.remember(ctx.session_id, call.name)
        stage = Stage.APPROVED if result.decision.allowed else Stage.DENIED
        notify(StageEvent(stage, call, ref, arguments=request.arguments, risk=request.risk, approval=result))
        return result

    async def _execute(self, ref: FunctionRef, params: BaseModel, ctx: ToolContext, fn: str) -> ToolResult:
        spec = self.registry.spec(ref.tool)
        sem = self._semaphores.setdefault(ref.tool, asyncio.Semaphore(spec.concurrency))
        tool = self.registry.get(ref.tool)
        async with sem:
            try:
                async with asyncio.timeout(spec.timeout_s):
                    result = await tool.execute(ref.action, params, ctx)
            except TimeoutError:
                return ToolResult.fail(
                    f"{fn} did not finish within {spec.timeout_s:g} s and was stopped. "
                    "Try a smaller task or tell the user it takes too long.",
                    status=ToolStatus.TIMEOUT,
                )
            except ToolError as exc:
                return ToolResult.fail(str(exc))
            except BridgeMissingError as exc:
                return ToolResult.fail(str(exc))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.exception("tool %s raised", fn)
                return ToolResult.fail(
                    f"{fn} failed: {type(exc).__name__}: {exc}. "
                    "Check the arguments, try a different approach, or tell the user."
                )
        if not isinstance(result, ToolResult):
            log.error("tool %s returned %r instead of a ToolResult", fn, type(result))
            return ToolResult.fail(f"{fn} returned an invalid result (a bug in the tool).")
        return result

    def _unknown_function(self, name: str, callable_functions: Sequence[str] | None) -> ToolResult:
        names = list(callable_functions) if callable_functions is not None else self.registry.all_functions()
        listed = ", ".join(names[:MAX_LISTED_NAMES]) + (" …" if len(names) > MAX_LISTED_NAMES else "")
        return ToolResult.fail(
            f"There is no function named '{name}'. You can call: {listed or 'no functions'}. "
            "If none fits, call tool_search_find to look for a tool, or answer without one."
        )

    async def _audit_begin(self, call: ToolCall, ctx: ToolContext, state: _Outcome) -> Any:
        """The call starts: a sink that can (StartedAuditSink) records it now, as running."""
        if not isinstance(self.audit, StartedAuditSink):
            return None
        try:
            return await self.audit.begin(self._audit_record(call, ctx, state, ToolResult.ok("")))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("audit begin failed for %s", call.id)
            return None

    async def _audit(self, call: ToolCall, ctx: ToolContext, state: _Outcome, result: ToolResult) -> None:
        if self.audit is None:
            return
        rec = self._audit_record(call, ctx, state, result)
        try:
            if state.audit_row is not None and isinstance(self.audit, StartedAuditSink):
                await self.audit.finish(state.audit_row, rec)
            else:
                await self.audit.record(rec)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("audit record failed for %s", call.id)

    def _audit_record(self, call: ToolCall, ctx: ToolContext, state: _Outcome, result: ToolResult) -> AuditRecord:
        ref = state.ref
        return AuditRecord(
            trace_id=ctx.trace_id or uuid.uuid4().hex[:16],
            run_id=ctx.run_id,
            session_id=ctx.session_id,
            call_id=call.id,
            tool=ref.tool if ref else "",
            action=ref.action if ref else "",
            function=call.name,
            origin=ctx.origin.value,
            started_at=state.started,
            duration_ms=result.duration_ms,
            status=result.status.value,
            result_len=len(result.for_model()),
            error_summary=summarize_error(result.error) if not result.succeeded else "",
            approval=state.approval.decision.value if state.approval else "",
            decided_by=state.approval.decided_by if state.approval else "",
        )


def _parse_arguments(raw: str | None) -> dict[str, Any] | str:
    """The arguments as a dict, or a short reason they are not one (bad JSON, too deep, too long)."""
    try:
        return parse_arguments(raw)
    except ArgumentsError as exc:
        return str(exc)


def _validate(model: type[BaseModel], arguments: dict[str, Any]) -> BaseModel | list[str]:
    known: set[str] = set()
    for name, info in model.model_fields.items():
        known.add(name)
        if info.alias:
            known.add(info.alias)
    errors = [
        f"unknown argument '{key}' (valid: {', '.join(sorted(known)) or 'none'})"
        for key in arguments
        if key not in known
    ]
    try:
        params = model.model_validate(arguments)
    except ValidationError as exc:
        for err in exc.errors():
            if err["type"] == "extra_forbidden":
                continue
            loc = ".".join(str(p) for p in err["loc"]) or "(arguments)"
            errors.append(f"{loc}: {err['msg']}")
        return errors
    return errors or params


def _invalid(name: str, errors: list[str]) -> ToolResult:
    listed = "\n".join(f"- {e}" for e in errors)
    return ToolResult.fail(f"Invalid arguments for {name}:\n{listed}\nFix the arguments and call again.")


def _denied(name: str, approval: ApprovalResult) -> ToolResult:
    if approval.decided_by == "no-gate":
        why = f"{name} needs approval, but no one is there to approve it."
    else:
        who = {"user": "The user", "policy": "The approval policy"}.get(approval.decided_by, approval.decided_by)
        note = f" ({approval.note})" if approval.note else ""
        why = f"{who} did not allow {name}{note}."
    return ToolResult.fail(f"{why} Do not retry the same call; ask the user how to proceed.", status=ToolStatus.DENIED)
