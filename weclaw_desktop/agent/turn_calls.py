"""A turn's tool calls: step 4 of each round of the turn loop (``agent/loop.py``).

:class:`TurnCalls` runs a round's calls concurrently through the :class:`Dispatcher` (the round boundary,
validation, approval, hooks, timeouts, per-tool concurrency and audit live there) with the round's
:class:`Exposure` as the boundary, the turn's approval gate and the round's provenance snapshot
(``agent/provenance.py``: what untrusted content the model had seen). Each :class:`CallOutcome` is capped
(the turn's :class:`ResultBudget`), stored with its timing (the whole duration and the part spent waiting for
the user's approval) and emitted, and an untrusted result is added to the turn's provenance. The loop guard's
refusals are outcomes of the same type (``Dispatcher.refuse``); the circuit breaker counts each outcome.

It also owns the turn's calls that were asked for but have no result yet (:attr:`TurnCalls.open_calls`):
on Stop or an internal error :meth:`TurnCalls.close_open` gives each one, so the history stays a valid
conversation. The turn it serves is seen through :class:`TurnSide` (no import of the loop: imports point down).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, Protocol

from weclaw_desktop.agent import events as ev
from weclaw_desktop.agent.guards import CircuitBreaker, LoopGuard, ResultBudget
from weclaw_desktop.agent.history import HistoryStore
from weclaw_desktop.agent.provenance import arguments_of, note_outcome
from weclaw_desktop.agent.provider import AssembledCall
from weclaw_desktop.intent.api import TurnExposure
from weclaw_desktop.textsafe import fs_display
from weclaw_desktop.toolkit.approval import ApprovalGate
from weclaw_desktop.toolkit.base import Origin, ToolContext, ToolEnv, ToolResult, ToolStatus
from weclaw_desktop.toolkit.dispatcher import Dispatcher, Observer, Stage, StageEvent, ToolCall
from weclaw_desktop.toolkit.exposure import Exposure
from weclaw_desktop.toolkit.outcome import CallOutcome, DecidedBy, ErrorKind
from weclaw_desktop.toolkit.provenance import Provenance
from weclaw_desktop.toolkit.redact import redact

log = logging.getLogger("weclaw.loop")

#: Refusals that say nothing about the tool itself, so routing does not widen after them.
_NOT_NOTED = frozenset({ErrorKind.NOT_OFFERED, ErrorKind.CIRCUIT_OPEN, ErrorKind.LOOP_GUARD})


class TurnSide(Protocol):
    """What the calls need of their turn: where they are, the conversation sent to the model, and its plumbing."""

    session_id: str
    run_id: str
    round_no: int
    messages: list[dict[str, Any]]

    def emit(self, event_type: type[ev.Event], **fields: Any) -> None: ...

    async def durable(self, coro: Coroutine[Any, Any, Any]) -> Any: ...


class TurnCalls:
    """The tool-call side of one turn (kept per turn, so concurrent sessions never share it)."""

    def __init__(
        self,
        turn: TurnSide,
        *,
        dispatcher: Dispatcher,
        history: HistoryStore,
        tool_env: ToolEnv,
        origin: Origin,
        gate: ApprovalGate | None,
        guard: LoopGuard,
        breaker: CircuitBreaker,
        budget: ResultBudget,
        repeats: int,
    ) -> None:
        self.turn = turn
        self.dispatcher = dispatcher
        self.history = history
        self.tool_env = tool_env
        self.origin = origin
        self.gate = gate
        self.guard = guard
        self.breaker = breaker
        self.budget = budget
        self.repeats = repeats  # loop_guard_repeats, for the refusal's words
        self.open_calls: dict[str, AssembledCall] = {}  # stored in an assistant message, no result yet
        self.round_files: list[tuple[str, list[str]]] = []  # this round's tool results that listed files
        self.provenance = Provenance()  # what untrusted content the turn has seen (the loop sets its start)
        self._stopped: dict[str, CallOutcome] = {}  # the dispatcher's outcome of a call Stop cancelled (its times)

    async def run_round(self, calls: list[AssembledCall], rnd: Exposure, exposure: TurnExposure) -> str:
        """Run the round's calls; returns the function that tripped the loop guard ('' if none)."""
        registry = self.dispatcher.registry
        self.round_files = []
        tripped = ""
        jobs = []
        seen = self.provenance.snapshot()  # this round's calls were written before its results came
        for c in calls:
            ref = registry.resolve(c.name)
            self.turn.emit(
                ev.ToolCallRequested,
                call_id=c.id,
                function=c.name,
                tool=ref.tool if ref else "",
                action=ref.action if ref else "",
                arguments=c.arguments,
            )
            if self.guard.trips(c.name, c.arguments):
                tripped = tripped or c.name
                jobs.append(self._stop_repeated(c))
            else:
                jobs.append(self._call(c, rnd, exposure, seen))
        outcomes = await asyncio.gather(*jobs, return_exceptions=True)  # let every call finish first
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        return tripped

    def _context(self, c: AssembledCall) -> ToolContext:
        turn = self.turn
        return self.tool_env.context(
            session_id=turn.session_id,
            run_id=turn.run_id,
            call_id=c.id,
            origin=self.origin,
            progress_callback=lambda fraction, message: turn.emit(
                ev.ToolCallProgress, call_id=c.id, fraction=fraction, message=message
            ),
            trace_id=f"{turn.run_id}-{c.id}"[:64],
        )

    async def _stop_repeated(self, c: AssembledCall) -> None:
        text = (
            f"Not run: {c.name} was called with the same arguments {self.repeats} times "
            "in this turn, so the turn was stopped."
        )
        outcome = await self.dispatcher.refuse(
            ToolCall(c.id, c.name, c.arguments),
            self._context(c),
            decided_by=DecidedBy.LOOP_GUARD,
            error=ErrorKind.LOOP_GUARD,
            message=text,
        )
        await self._store_result(c, outcome)

    def _observer(self, c: AssembledCall) -> Observer:
        emit = self.turn.emit

        def observe(stage: StageEvent) -> None:
            if stage.stage is Stage.FINISHED and stage.outcome is not None:
                if stage.outcome.error is ErrorKind.CANCELLED:  # stored by close_open, with these times
                    self._stopped[c.id] = stage.outcome
            elif stage.stage is Stage.AWAITING_APPROVAL and stage.risk is not None:
                emit(
                    ev.ToolCallAwaitingApproval,
                    call_id=c.id,
                    function=c.name,
                    risk=stage.risk,
                    arguments=dict(stage.arguments or {}),
                )
            elif stage.stage is Stage.APPROVED and stage.approval is not None:
                emit(ev.ToolCallApproved, call_id=c.id, decided_by=stage.approval.decided_by)
            elif stage.stage is Stage.DENIED and stage.approval is not None:
                emit(
                    ev.ToolCallDenied,
                    call_id=c.id,
                    decided_by=stage.approval.decided_by,
                    reason=stage.approval.note,
                    error_kind=stage.error or ErrorKind.DENIED,
                )
            elif stage.stage is Stage.STARTED and stage.ref is not None:
                emit(
                    ev.ToolCallStarted,
                    call_id=c.id,
                    function=c.name,
                    tool=stage.ref.tool,
                    action=stage.ref.action,
                    arguments=dict(stage.arguments or {}),
                )

        return observe

    async def _call(self, c: AssembledCall, rnd: Exposure, exposure: TurnExposure, seen: Provenance) -> None:
        dispatcher = self.dispatcher
        outcome = await dispatcher.dispatch(
            ToolCall(c.id, c.name, c.arguments),
            self._context(c),
            gate=self.gate,
            offered=rnd,
            observer=self._observer(c),
            provenance=seen,
        )
        note_outcome(self.provenance, outcome, arguments_of(c.arguments), dispatcher.safety)
        if outcome.tool:
            if outcome.error not in _NOT_NOTED:
                exposure.note_result(outcome.tool, outcome.action, outcome.result)
            # a dynamic tool (an MCP server) is many independent tools: its circuit is per function
            unit = outcome.function if dispatcher.registry.is_dynamic(outcome.tool) else outcome.tool
            if self.breaker.record(unit, outcome.result):
                log.warning("circuit open for %s in run %s", unit, self.turn.run_id)
        await self._store_result(c, outcome)

    def _unfinished(self, c: AssembledCall, text: str, status: ToolStatus, kind: ErrorKind) -> CallOutcome:
        """The result of a call that did not finish; with the dispatcher's times when Stop cancelled it there
        (how long it ran, how long it had waited for approval), else none known."""
        registry = self.dispatcher.registry
        ref = registry.resolve(c.name)
        result = ToolResult.fail(text, status=status)
        stopped = self._stopped.get(c.id)
        if stopped is not None:
            result.duration_ms = stopped.result.duration_ms
        return CallOutcome(
            call_id=c.id,
            function=c.name,
            result=result,
            tool=ref.tool if ref else "",
            action=ref.action if ref else "",
            risk=registry.risk_of(ref.tool, ref.action) if ref else None,
            error=kind,
            waited_ms=stopped.waited_ms if stopped is not None else None,
        )

    async def _store_result(self, c: AssembledCall, outcome: CallOutcome) -> None:
        turn = self.turn
        result = outcome.result
        # undecodable bytes of file names as \xNN (the model can send them back), other odd text as U+FFFD
        text, truncated = self.budget.take(redact(fs_display(result.for_model())))
        truncated = truncated or result.truncated
        self.open_calls.pop(c.id, None)
        turn.messages.append({"role": "tool", "tool_call_id": c.id, "content": text})
        if result.files:
            self.round_files.append((c.name, list(result.files)))
        await turn.durable(
            self.history.add_tool_result(
                turn.session_id,
                turn.run_id,
                turn.round_no,
                call_id=c.id,
                function=c.name,
                tool=outcome.tool,
                action=outcome.action,
                arguments=c.arguments,
                status=result.status.value,
                output=text,
                error=result.error or "",
                files=result.files,
                duration_ms=result.duration_ms,
                truncated=truncated,
                waited_ms=outcome.waited_ms,
            )
        )
        turn.emit(
            ev.ToolCallFinished,
            call_id=c.id,
            function=c.name,
            tool=outcome.tool,
            action=outcome.action,
            status=result.status,
            output=text,
            duration_ms=result.duration_ms,
            files=list(result.files),
            error=redact(fs_display(result.error or "")),
            truncated=truncated,
            error_kind=outcome.error,
            decided_by=outcome.decided_by,
            risk=outcome.risk,
            waited_ms=outcome.waited_ms,
        )

    async def close_open(
        self, text: str, status: ToolStatus = ToolStatus.ERROR, kind: ErrorKind = ErrorKind.INTERNAL
    ) -> None:
        """Give every stored call without a result one, so the history stays a valid conversation."""
        for c in list(self.open_calls.values()):
            await self._store_result(c, self._unfinished(c, text, status, kind))
