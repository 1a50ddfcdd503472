"""The dispatcher: one path for every tool call, built-in, plugin or MCP.

function name -> (tool, action) -> offered in this round? -> availability and policy -> parse JSON
arguments -> validate -> effects and provenance -> approval -> before hooks -> execute with the tool's
timeout and concurrency limit -> after hooks -> audit.

The approval step applies the provenance rule (#13): the call's effects come from tools.json
(:class:`~weclaw_desktop.toolkit.effects.SafetyModel`); when the round's :class:`Provenance` says untrusted
content is in the conversation and an effect is one of ``safety.after_untrusted``, the user is asked
whatever the risk, the "always allow" rules and the session approvals say (a ``deny`` still wins).

:meth:`Dispatcher.dispatch` takes the approval gate and the round's boundary (the :class:`Exposure` the
model was offered, or :data:`NO_ROUND` for callers that are not the model) as arguments and returns a
:class:`CallOutcome`: the :class:`ToolResult` whose text tells the model what to do next, plus typed facts
(error kind, who decided, risk). The full exception goes to the log. Cancellation is recorded in the audit
and re-raised.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ValidationError

from weclaw_desktop.toolkit.approval import (
    AllowRule,
    ApprovalDecision,
    ApprovalGate,
    ApprovalPolicy,
    ApprovalRequest,
    ApprovalResult,
    SessionApprovals,
)
from weclaw_desktop.toolkit.audit import AuditRecord, AuditSink, StartedAuditSink
from weclaw_desktop.toolkit.availability import AvailabilityContext
from weclaw_desktop.toolkit.base import (
    BridgeMissingError,
    Risk,
    ToolContext,
    ToolError,
    ToolResult,
    ToolStatus,
)
from weclaw_desktop.toolkit.diagnostics import Code, Diagnostic
from weclaw_desktop.toolkit.effects import SafetyModel
from weclaw_desktop.toolkit.exposure import Exposure, ExposurePlanner, Offered
from weclaw_desktop.toolkit.hooks import HookCall, Hooks
from weclaw_desktop.toolkit.jsonargs import ArgumentsError, parse_arguments
from weclaw_desktop.toolkit.outcome import CallOutcome, DecidedBy, ErrorKind, kind_of_status
from weclaw_desktop.toolkit.pathclass import Places
from weclaw_desktop.toolkit.policy import Policy
from weclaw_desktop.toolkit.provenance import Provenance
from weclaw_desktop.toolkit.registry import FunctionRef, ToolLoadError, ToolRegistry
from weclaw_desktop.toolkit.request import UNKNOWN_SOURCE, approval_request

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
    """A step of one call. DENIED comes for every refusal before the tool ran (the gate, the approval
    policy, a rule, a hook, the round boundary); FINISHED carries the outcome."""

    stage: Stage
    call: ToolCall
    ref: FunctionRef | None
    arguments: dict[str, Any] | None = None
    risk: Risk | None = None
    result: ToolResult | None = None
    approval: ApprovalResult | None = None
    error: ErrorKind | None = None  # DENIED: which refusal
    outcome: CallOutcome | None = None


Observer = Callable[[StageEvent], None]


@dataclass
class _State:
    """What the pipeline knows so far about one call."""

    call: ToolCall
    notify: Observer
    ref: FunctionRef | None = None
    risk: Risk | None = None
    approval: ApprovalResult | None = None
    error: ErrorKind | None = None
    hook: str = ""
    ran: bool = False
    audit_row: Any = None  # the audit sink's token of the row written when the call started (#18)
    waited_ms: float = 0.0  # time spent waiting for a person at the approval gate (part of the duration)
    started: float = field(default_factory=time.time)
    t0: float = field(default_factory=time.perf_counter)

    def fail(self, kind: ErrorKind, message: str, status: ToolStatus = ToolStatus.ERROR) -> ToolResult:
        self.error = kind
        return ToolResult.fail(message, status=status)

    def refuse(
        self,
        kind: ErrorKind,
        decided_by: DecidedBy,
        message: str,
        *,
        note: str = "",
        status: ToolStatus = ToolStatus.DENIED,
    ) -> ToolResult:
        """A decision not to run the call (DENIED status: announced as Stage.DENIED)."""
        self.approval = ApprovalResult(ApprovalDecision.DENY, decided_by=decided_by, note=note)
        if status is ToolStatus.DENIED:
            self.notify(
                StageEvent(Stage.DENIED, self.call, self.ref, risk=self.risk, approval=self.approval, error=kind)
            )
        return self.fail(kind, message, status)

    def outcome(self, result: ToolResult) -> CallOutcome:
        result.duration_ms = round((time.perf_counter() - self.t0) * 1000, 3)
        kind = None if result.succeeded else self.error or kind_of_status(result.status)
        ref = self.ref
        return CallOutcome(
            call_id=self.call.id,
            function=self.call.name,
            result=result,
            tool=ref.tool if ref else "",
            action=ref.action if ref else "",
            risk=self.risk,
            decided_by=self.approval.decided_by if self.approval else None,
            approval=self.approval.decision if self.approval else None,
            error=kind,
            note=self.approval.note if self.approval else "",
            hook=self.hook,
            ran=self.ran,
            waited_ms=round(self.waited_ms, 3),
        )


class Dispatcher:
    """One pipeline for every call. ``policy``, ``approval_policy`` and ``availability`` are plain
    attributes, read at each call: assigning them (a settings change) applies to the next call."""

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
        places: Places | None = None,
    ) -> None:
        self.registry = registry
        #: tools.json's trust and effects declarations, evaluated (the approval step and the loop use it).
        self.safety = SafetyModel(registry, places)
        self.policy = policy or Policy()
        self.approval_policy = approval_policy or ApprovalPolicy()
        self.session_approvals = session_approvals or SessionApprovals()
        self.hooks = hooks or Hooks()
        self.audit = audit
        self.availability = availability or AvailabilityContext
        #: The one exposure computation, on this dispatcher's policy and availability (the loop, tool_search).
        self.exposure = ExposurePlanner(registry, policy=lambda: self.policy, availability=lambda: self.availability())
        self._semaphores: dict[str, asyncio.Semaphore] = {}
        #: Called with an "always allow" rule the user chose at the gate (the runtime saves it in settings).
        self.remember_rule: Callable[[AllowRule], None] | None = None

    async def dispatch(
        self,
        call: ToolCall,
        ctx: ToolContext,
        *,
        gate: ApprovalGate | None,
        offered: Offered,
        observer: Observer | None = None,
        provenance: Provenance | None = None,
    ) -> CallOutcome:
        """Run one call through the whole pipeline. Never raises except for cancellation.

        ``gate`` asks a person when a call needs approval (None: no one can be asked, so such calls are
        denied). ``offered`` is the round's boundary: the :class:`Exposure` the model was offered, whose
        other functions are refused, or ``NO_ROUND`` for a caller that is not the model. ``provenance`` is
        what the model had seen when it wrote the call (the loop passes the round's snapshot); in a model
        round without one, the provenance is unknown and counts as untrusted (fail closed). Outside a
        model round (``NO_ROUND``) None means no model, so no untrusted content.
        """
        state = _State(call, observer or (lambda event: None))
        if provenance is None and isinstance(offered, Exposure):
            provenance = Provenance(sources=[UNKNOWN_SOURCE])
        try:
            result = await self._pipeline(call, ctx, state, gate, offered, provenance)
        except asyncio.CancelledError:
            state.error = ErrorKind.CANCELLED
            outcome = state.outcome(ToolResult.fail("The call was cancelled by the user.", status=ToolStatus.CANCELLED))
            await self._finish(outcome, ctx, state)
            raise
        except Exception as exc:  # a bug in the pipeline or a hook that raised: this call fails, the turn goes on
            log.exception("dispatch of %s failed", call.name)
            result = state.fail(
                ErrorKind.INTERNAL if not state.hook else ErrorKind.HOOK_FAILED,
                f"{call.name} could not be run because of an internal error ({type(exc).__name__}). "
                "Tell the user; do not retry the same call.",
            )
        outcome = state.outcome(result)
        await self._finish(outcome, ctx, state)
        return outcome

    async def _finish(self, outcome: CallOutcome, ctx: ToolContext, state: _State) -> None:
        await self._audit(outcome, ctx, state.started, state.audit_row)
        state.notify(StageEvent(Stage.FINISHED, state.call, state.ref, result=outcome.result, outcome=outcome))

    async def _pipeline(
        self,
        call: ToolCall,
        ctx: ToolContext,
        state: _State,
        gate: ApprovalGate | None,
        offered: Offered,
        provenance: Provenance | None,
    ) -> ToolResult:
        ref = self.registry.resolve(call.name)
        if ref is None:
            return state.fail(ErrorKind.UNKNOWN_FUNCTION, self._unknown_function(call.name, offered))
        state.ref = ref
        state.risk = self.registry.risk_of(ref.tool, ref.action)  # tools.json's (the module may not be loaded)

        if not offered.offers(call.name):
            assert isinstance(offered, Exposure)
            return self._not_offered(call.name, ref, offered, state)

        problems = self.exposure.diagnose(ref.tool, ref.action)
        if problems:
            return self._unavailable(call.name, problems, state)

        try:
            action_def = self.registry.action_def(ref.tool, ref.action)
        except ToolLoadError as exc:
            log.error("cannot load %s: %s", ref.tool, exc)
            return state.fail(
                ErrorKind.LOAD_FAILED, f"{call.name} is broken on this installation ({exc}). Use another tool."
            )

        state.risk = self.registry.risk_of(ref.tool, ref.action)  # loaded now: the action's own risk counts too

        parsed = _parse_arguments(call.arguments)
        if isinstance(parsed, str):
            return state.fail(
                ErrorKind.INVALID_JSON,
                f"The arguments of {call.name} are not valid JSON ({parsed}). "
                "Send one JSON object that matches the function's parameters and call again.",
            )
        params = _validate(action_def.params, parsed)
        if isinstance(params, list):
            return state.fail(ErrorKind.INVALID_ARGUMENTS, _invalid(call.name, params))

        request = approval_request(self.safety, call.id, call.name, ref, parsed, state.risk, ctx, provenance)
        approval = await self._approve(request, ctx, gate, state, forced_reason=None)
        if not approval.decision.allowed:
            return self._denied(call.name, approval, state)

        hook_call = HookCall(ref.tool, ref.action, call.name, parsed, state.risk, ctx)
        for hook_name, before in self.hooks.before_for(call.name):
            state.hook = hook_name  # a hook that raises is reported as hook-failed
            hooked = await before(hook_call)
            state.hook = ""
            if hooked is None:
                continue
            if hooked.block is not None:
                state.hook = hook_name
                return state.refuse(ErrorKind.DENIED, DecidedBy.HOOK, hooked.block, note=hooked.block)
            if hooked.arguments is not None:
                rewritten = _validate(action_def.params, hooked.arguments)
                if isinstance(rewritten, list):
                    state.hook = hook_name
                    return state.fail(
                        ErrorKind.HOOK_FAILED, f"Hook '{hook_name}' produced invalid arguments: {'; '.join(rewritten)}"
                    )
                params = rewritten
                hook_call.arguments = dict(hooked.arguments)
            if hooked.require_approval is not None and approval.decided_by is not DecidedBy.USER:
                approval = await self._approve(request, ctx, gate, state, forced_reason=hooked.require_approval)
                if not approval.decision.allowed:
                    return self._denied(call.name, approval, state)

        state.notify(StageEvent(Stage.STARTED, call, ref, arguments=hook_call.arguments, risk=state.risk))
        state.ran = True
        state.audit_row = await self._audit_begin(ctx, state)
        result = await self._execute(ref, params, ctx, call.name, state)

        for hook_name, after in self.hooks.after_for(call.name):
            state.hook = hook_name
            replaced = await after(hook_call, result)
            state.hook = ""
            if replaced is not None:
                if not isinstance(replaced, ToolResult):
                    raise TypeError(f"after hook {hook_name} returned {type(replaced).__name__}")
                result = replaced
                state.error = None  # the hook's result speaks for itself (its status gives the kind)
        return result

    async def _approve(
        self,
        request: ApprovalRequest,
        ctx: ToolContext,
        gate: ApprovalGate | None,
        state: _State,
        *,
        forced_reason: str | None,
    ) -> ApprovalResult:
        call, ref, notify = state.call, state.ref, state.notify
        result: ApprovalResult | None = None
        if forced_reason is None:
            policy = self.approval_policy
            rule, source = policy.decide(request)
            if rule == "deny":
                result = ApprovalResult(ApprovalDecision.DENY, decided_by=source, note="denied by policy")
            elif request.gated:
                pass  # untrusted content came in and this call sends data out / persists / reads secrets: ask
            elif rule == "allow":
                result = ApprovalResult(ApprovalDecision.ALLOW_ONCE, decided_by=source)
            elif policy.allow_rule_for(request) is not None:
                result = ApprovalResult(ApprovalDecision.ALLOW_ONCE, decided_by=DecidedBy.REMEMBERED)
            elif self.session_approvals.is_allowed(ctx.session_id, call.name):
                result = ApprovalResult(ApprovalDecision.ALLOW_ONCE, decided_by=DecidedBy.SESSION)
        else:
            request = ApprovalRequest(**{**request.__dict__, "reason": forced_reason})
        if result is None and gate is None:
            result = ApprovalResult(
                ApprovalDecision.DENY, decided_by=DecidedBy.NO_GATE, note="no one is there to approve it"
            )
        if result is None:
            assert gate is not None
            summary = await self.safety.describe(request.tool, request.action, request.arguments)
            request = dataclasses.replace(request, summary=summary)
            notify(StageEvent(Stage.AWAITING_APPROVAL, call, ref, arguments=request.arguments, risk=request.risk))
            asked = time.perf_counter()
            try:
                result = await gate.request(request)
            finally:  # a Stop while the person is asked still counts the wait so far
                state.waited_ms += (time.perf_counter() - asked) * 1000
            if result.decision is ApprovalDecision.ALLOW_SESSION:
                self.session_approvals.remember(ctx.session_id, call.name)
            elif result.decision is ApprovalDecision.ALLOW_ALWAYS and result.remember is not None:
                self.approval_policy = self.approval_policy.with_rule(result.remember)
                if self.remember_rule is not None:  # the runtime stores it in the settings
                    self.remember_rule(result.remember)
            if result.decision.allowed:
                notify(
                    StageEvent(
                        Stage.APPROVED, call, ref, arguments=request.arguments, risk=request.risk, approval=result
                    )
                )
        state.approval = result
        return result

    def _denied(self, name: str, approval: ApprovalResult, state: _State) -> ToolResult:
        if approval.decided_by is DecidedBy.NO_GATE:
            why = f"{name} needs approval, but no one is there to approve it."
        else:
            who = _DECIDERS.get(approval.decided_by, approval.decided_by.value)
            note = f" ({approval.note})" if approval.note else ""
            why = f"{who} did not allow {name}{note}."
        text = f"{why} Do not retry the same call; ask the user how to proceed."
        return state.refuse(ErrorKind.DENIED, approval.decided_by, text, note=approval.note)

    def _unavailable(self, name: str, problems: list[Diagnostic] | tuple[Diagnostic, ...], state: _State) -> ToolResult:
        reasons = " ".join(str(p) for p in problems)
        text = (
            f"{name} is not available right now: {reasons} "
            "Do not call it again in this conversation; tell the user what is needed."
        )
        if problems[0].code is Code.CIRCUIT_OPEN:
            return state.refuse(
                ErrorKind.CIRCUIT_OPEN, DecidedBy.CIRCUIT, f"{name} was not run: {problems[0]}", status=ToolStatus.ERROR
            )
        if problems[0].code.value.startswith("disabled-"):
            return state.refuse(ErrorKind.DISABLED, DecidedBy.POLICY, text, note=problems[0].message)
        return state.fail(ErrorKind.UNAVAILABLE, text)

    def _not_offered(self, name: str, ref: FunctionRef, offered: Exposure, state: _State) -> ToolResult:
        """The model named a function it was not offered: refuse, saying why (and how to get it)."""
        hidden = offered.why_hidden(ref.tool, name)
        if hidden:
            return self._unavailable(name, hidden, state)
        finders = [f for t in offered.tools if self.registry.spec(t).always_on for f in self.registry.functions_of(t)]
        how = (
            f"Call {finders[0]} with a few words about the need; the tools it finds can be called from your next step."
            if finders
            else "Use the functions you were given, or answer without a tool."
        )
        text = f"{name} exists but was not offered in this step, so it was not run. {how}"
        return state.refuse(ErrorKind.NOT_OFFERED, DecidedBy.EXPOSURE, text)

    async def _execute(
        self, ref: FunctionRef, params: BaseModel, ctx: ToolContext, fn: str, state: _State
    ) -> ToolResult:
        spec = self.registry.spec(ref.tool)
        sem = self._semaphores.setdefault(ref.tool, asyncio.Semaphore(spec.concurrency))
        tool = self.registry.get(ref.tool)
        async with sem:
            try:
                async with asyncio.timeout(spec.timeout_s):
                    result = await tool.execute(ref.action, params, ctx)
            except TimeoutError:
                return state.fail(
                    ErrorKind.TIMEOUT,
                    f"{fn} did not finish within {spec.timeout_s:g} s and was stopped. "
                    "Try a smaller task or tell the user it takes too long.",
                    ToolStatus.TIMEOUT,
                )
            except ToolError as exc:
                return state.fail(ErrorKind.TOOL_ERROR, str(exc))
            except BridgeMissingError as exc:
                return state.fail(ErrorKind.UNAVAILABLE, str(exc))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.exception("tool %s raised", fn)
                return state.fail(
                    ErrorKind.TOOL_CRASHED,
                    f"{fn} failed: {type(exc).__name__}: {exc}. "
                    "Check the arguments, try a different approach, or tell the user.",
                )
        if not isinstance(result, ToolResult):
            log.error("tool %s returned %r instead of a ToolResult", fn, type(result))
            return state.fail(ErrorKind.TOOL_CRASHED, f"{fn} returned an invalid result (a bug in the tool).")
        return result

    def _unknown_function(self, name: str, offered: Offered) -> str:
        names = list(offered.functions) if isinstance(offered, Exposure) else self.registry.all_functions()
        listed = ", ".join(names[:MAX_LISTED_NAMES]) + (" …" if len(names) > MAX_LISTED_NAMES else "")
        return (
            f"There is no function named '{name}'. You can call: {listed or 'no functions'}. "
            "If none fits, call tool_search_find to look for a tool, or answer without one."
        )

    async def refuse(
        self,
        call: ToolCall,
        ctx: ToolContext,
        *,
        decided_by: DecidedBy,
        error: ErrorKind,
        message: str,
        status: ToolStatus = ToolStatus.CANCELLED,
    ) -> CallOutcome:
        """A call the agent loop itself stops before dispatching it (the loop guard): the same outcome type
        and the same audit row as any other call."""
        state = _State(call, lambda event: None)
        state.ref = self.registry.resolve(call.name)
        if state.ref is not None:
            state.risk = self.registry.risk_of(state.ref.tool, state.ref.action)
        state.approval = ApprovalResult(ApprovalDecision.DENY, decided_by=decided_by)
        outcome = state.outcome(state.fail(error, message, status))
        await self._audit(outcome, ctx, state.started)
        return outcome

    async def _audit_begin(self, ctx: ToolContext, state: _State) -> Any:
        """The call starts: a sink that can (StartedAuditSink) records it now, as running (#18: a call
        that was running when the process died is on record). Returns the sink's token, or None."""
        if not isinstance(self.audit, StartedAuditSink):
            return None
        started = state.outcome(ToolResult.ok(""))
        rec = AuditRecord.of(started, ctx, started_at=state.started, trace_id=ctx.trace_id or state.call.id)
        try:
            return await self.audit.begin(rec)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("audit begin failed for %s", state.call.id)
            return None

    async def _audit(self, outcome: CallOutcome, ctx: ToolContext, started: float, row: Any = None) -> None:
        if self.audit is None:
            return
        trace = ctx.trace_id or (outcome.call_id if row is not None else uuid.uuid4().hex[:16])
        rec = AuditRecord.of(outcome, ctx, started_at=started, trace_id=trace)
        try:
            if row is not None and isinstance(self.audit, StartedAuditSink):
                await self.audit.finish(row, rec)
            else:
                await self.audit.record(rec)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("audit record failed for %s", outcome.call_id)


_DECIDERS = {
    DecidedBy.USER: "The user",
    DecidedBy.POLICY: "The approval policy",
    DecidedBy.RULE: "An approval rule",
    DecidedBy.AUTO: "The automatic approval setting",
}


def _parse_arguments(raw: str | None) -> dict[str, Any] | str:
    """The arguments as a dict, or a short reason they are not one (bad JSON, too deep, too long: #18)."""
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
    open_model = model.model_config.get("extra") == "allow"  # the schema accepts arguments it does not name
    errors = [
        f"unknown argument '{key}' (valid: {', '.join(sorted(known)) or 'none'})"
        for key in arguments
        if key not in known and not open_model
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


def _invalid(name: str, errors: list[str]) -> str:
    listed = "\n".join(f"- {e}" for e in errors)
    return f"Invalid arguments for {name}:\n{listed}\nFix the arguments and call again."
