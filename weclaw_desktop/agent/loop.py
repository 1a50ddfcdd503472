"""The turn loop: route and plan -> stream a completion -> run the tool calls -> next round.

One turn answers one user message. Each round:

1. the one exposure computation (``Dispatcher.exposure``, ``toolkit/exposure.py``) says what is offered:
   the planner's visible tools minus the tools the circuit breaker switched off for this turn, routed by
   the turn's exposure (recomputed every round), capped at ``exposure.max_functions``; the round is
   logged by name and count;
2. the provider streams the completion (text deltas are emitted as they arrive);
3. the assistant message is stored (durable before anything else happens);
4. the tool calls run concurrently through the :class:`Dispatcher` (``agent/turn_calls.py``,
   :class:`TurnCalls`: the round boundary, the turn's approval gate and the round's provenance snapshot);
   each :class:`CallOutcome` is capped, stored with its running time and approval wait, and emitted, and
   an untrusted result is added to the turn's provenance. The loop guard's refusals are outcomes of the
   same type (``Dispatcher.refuse``);
5. with no tool calls the answer is final; after ``max_rounds`` the turn stops with a message.

The loop emits typed events (``agent/events.py``) to a callback and knows nothing about the CLI or GUI.
Stop = cancelling the task that runs :meth:`AgentLoop.run_turn`: the stream is closed, running tools are
cancelled, what happened is stored, and the CancelledError is re-raised; the session stays usable.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from weclaw_desktop.agent import events as ev
from weclaw_desktop.agent import turn_extras
from weclaw_desktop.agent.guards import CircuitBreaker, LoopGuard, ResultBudget, registry_path_fields, relative_base
from weclaw_desktop.agent.history import HistoryStore, SessionBusy
from weclaw_desktop.agent.history_context import conversation_before
from weclaw_desktop.agent.prompt import system_prompt, user_language
from weclaw_desktop.agent.provenance import ProvenanceStore, turn_provenance
from weclaw_desktop.agent.provider import Provider, ProviderError
from weclaw_desktop.agent.turn_calls import TurnCalls
from weclaw_desktop.agent.turn_plan import TurnPlan, compose_prompt
from weclaw_desktop.intent.api import Exposer, TurnExposure, TurnRequest
from weclaw_desktop.storage.faults import StorageError
from weclaw_desktop.textsafe import clean_text
from weclaw_desktop.toolkit.approval import ApprovalGate
from weclaw_desktop.toolkit.base import Origin, ToolEnv, ToolStatus
from weclaw_desktop.toolkit.diagnostics import Code, Diagnostic
from weclaw_desktop.toolkit.dispatcher import Dispatcher
from weclaw_desktop.toolkit.exposure import Exposure, cap_note_of
from weclaw_desktop.toolkit.outcome import ErrorKind
from weclaw_desktop.toolkit.redact import StreamRedactor, redact
from weclaw_desktop.toolkit.registry import ToolRegistry

log = logging.getLogger("weclaw.loop")

Emit = Callable[[ev.Event], None]


@dataclass
class LoopOptions:
    max_rounds: int = 12
    result_cap: int = 16_000  # characters per tool result (head and tail kept)
    turn_result_budget: int = 100_000  # characters of tool results per turn
    loop_guard_repeats: int = 3  # the same function with the same arguments this often stops the turn
    circuit_failures: int = 3  # failures in a row that switch a tool off for the rest of the turn
    max_context_chars: int = 200_000  # history sent to the model, newest first
    language: str = "system"  # ui language setting: system | en | zh


#: Texts at least this long are masked in a worker thread: the whole answer is masked again when it ends
#: (~9 ms per 100k characters), on the loop the UI runs on.
REDACT_OFF_LOOP_CHARS = 32_000


async def redact_off_loop(text: str) -> str:
    """:func:`redact`, in a worker thread for a long text (between its patterns the loop gets the interpreter)."""
    if len(text) < REDACT_OFF_LOOP_CHARS:
        return redact(text)
    return await asyncio.to_thread(redact, text)


class AgentLoop:
    """Runs turns. The runtime owns one and may swap ``provider`` when settings change."""

    def __init__(
        self,
        *,
        provider: Provider,
        dispatcher: Dispatcher,
        exposer: Exposer,
        history: HistoryStore,
        tool_env: ToolEnv,
        options: LoopOptions | None = None,
        provenance_store: ProvenanceStore | None = None,
    ) -> None:
        self.provider = provider
        self.provenance_store = provenance_store
        self.dispatcher = dispatcher
        self.exposer = exposer
        self.history = history
        self.tool_env = tool_env
        self.options = options or LoopOptions()

    @property
    def registry(self) -> ToolRegistry:
        return self.dispatcher.registry

    async def run_turn(
        self,
        session_id: str,
        text: str,
        *,
        emit: Emit,
        run_id: str | None = None,
        origin: Origin = Origin.GUI,
        gate: ApprovalGate | None,
        plan: TurnPlan | None = None,
        pasted: bool = False,
    ) -> ev.TurnDone:
        """One turn. ``gate`` asks the user about calls that need approval (None: no one can be asked,
        so those calls are denied). ``plan``: provider, assistant, branch and attachments of the turn.
        ``pasted``: the message holds text the user pasted (untrusted)."""
        turn = _Turn(self, session_id, run_id or uuid.uuid4().hex[:12], text, emit, origin, gate, plan or TurnPlan())
        turn.pasted = pasted
        return await turn.run()


class _Turn:
    """The state of one turn (kept off AgentLoop so concurrent sessions never share it)."""

    def __init__(
        self,
        loop: AgentLoop,
        session_id: str,
        run_id: str,
        text: str,
        emit: Emit,
        origin: Origin,
        gate: ApprovalGate | None,
        plan: TurnPlan,
    ) -> None:
        self.loop = loop
        self.plan = plan
        self.provider = plan.provider or loop.provider
        self.opts = loop.options
        self.session_id = session_id
        self.run_id = run_id
        self.text = text
        self._emit = emit
        self.round_no = 0
        self.breaker = CircuitBreaker(self.opts.circuit_failures)
        self.messages: list[dict[str, Any]] = []
        self.cap_noted = False  # the system message told the model what the function cap left out
        self.partial: list[str] = []  # text streamed in the current round
        self.shown = StreamRedactor()  # what of it the front end was shown (masked)
        self.partial_reasoning: list[str] = []  # thinking streamed in the current round
        self._high = ""  # a high surrogate held back until the next delta (a pair split across deltas)
        self.writes: set[asyncio.Task[Any]] = set()
        self.pasted = False
        guard = LoopGuard(
            self.opts.loop_guard_repeats,
            path_fields_of=registry_path_fields(loop.registry),
            base=relative_base(loop.tool_env.allowed_roots),
        )
        self.calls = TurnCalls(  # step 4 of each round, and the calls still without a result
            self,
            dispatcher=loop.dispatcher,
            history=loop.history,
            tool_env=loop.tool_env,
            origin=origin,
            gate=gate,
            guard=guard,
            breaker=self.breaker,
            budget=ResultBudget(self.opts.result_cap, self.opts.turn_result_budget),
            repeats=self.opts.loop_guard_repeats,
        )

    # --- plumbing -----------------------------------------------------------------------------------
    def emit(self, event_type: type[ev.Event], **fields: Any) -> None:
        event = event_type(run_id=self.run_id, session_id=self.session_id, **fields)
        try:
            self._emit(event)
        except Exception:  # a broken front end must not break the turn
            log.exception("event handler failed for %s", event.kind)

    async def durable(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Await a history write that must complete even if the turn is cancelled meanwhile."""
        task = asyncio.ensure_future(coro)
        self.writes.add(task)
        task.add_done_callback(self.writes.discard)
        return await asyncio.shield(task)

    # --- the turn -----------------------------------------------------------------------------------
    async def run(self) -> ev.TurnDone:
        loop = self.loop
        try:
            await self.durable(turn_extras.record_start(loop.history, self.session_id, self.run_id, self.plan))
            await self.durable(loop.history.begin_turn(self.session_id, self.run_id, self.text))
        except (KeyError, SessionBusy, StorageError) as exc:
            if isinstance(exc, KeyError):
                message, kind = "This conversation no longer exists. Start a new one.", "bad_request"
            else:
                message, kind = str(exc), "busy" if isinstance(exc, SessionBusy) else "storage"
            self.emit(ev.ErrorOccurred, message=message, kind=kind)
            done = self._done("error", message=message)
            self.emit_done(done)
            return done
        try:
            return await self._run_and_finish()
        finally:
            loop.history.release_turn(self.run_id)

    async def _run_and_finish(self) -> ev.TurnDone:
        loop = self.loop
        try:
            done = await self._rounds()
        except asyncio.CancelledError:
            await self._after_cancel()
            raise
        except StorageError as exc:  # disk full, database locked or damaged: say so, end the turn cleanly
            log.warning("turn %s stopped: %s", self.run_id, exc)
            self.emit(ev.ErrorOccurred, message=exc.message, kind="storage")
            done = self._done("error", message=exc.message)
        except Exception as exc:  # a bug: report it, keep the session consistent
            log.exception("turn %s failed", self.run_id)
            message = f"Internal error: {type(exc).__name__}: {redact(str(exc))[:200]}"
            try:
                await self.calls.close_open("The call did not finish because of an internal error.")
            except Exception:  # e.g. the disk is full: the next load repairs the history instead
                log.exception("could not record the unfinished calls of %s", self.run_id)
            self.emit(ev.ErrorOccurred, message=message, kind="internal")
            done = self._done("error", message=message)
        try:
            await self.durable(loop.history.finish_turn(self.run_id, done.reason, self.round_no, done.message))
        except StorageError as exc:  # kept by the history; applied when the session is next used
            log.warning("could not record the end of turn %s: %s", self.run_id, exc)
        except Exception:
            log.exception("could not record the end of turn %s", self.run_id)
        self.emit_done(done)
        return done

    def _done(self, reason: ev.DoneReason, *, text: str = "", message: str = "") -> ev.TurnDone:
        return ev.TurnDone(
            run_id=self.run_id,
            session_id=self.session_id,
            reason=reason,
            text=text,
            rounds=self.round_no,
            message=message,
        )

    def emit_done(self, done: ev.TurnDone) -> None:
        try:
            self._emit(done)
        except Exception:
            log.exception("event handler failed for turn_done")

    async def _rounds(self) -> ev.TurnDone:
        loop = self.loop
        lang = user_language(self.opts.language, self.text)
        history = await turn_extras.history_for(self)  # the active branch, attachments and images expanded
        recent = await loop.history.recent_tools(self.session_id)
        earlier = await conversation_before(loop.history, self.session_id, self.run_id)
        exposure = loop.exposer.start_turn(TurnRequest.of(self.text, recent, earlier))
        self.calls.provenance = await turn_provenance(
            history,
            loop.dispatcher.safety,
            loop.provenance_store,
            self.session_id,
            self.run_id,
            pasted=self.pasted,
            text=self.text,
        )
        prompt = compose_prompt(system_prompt(language=lang, outputs_dir=loop.tool_env.outputs_dir), self.plan)
        self.messages = [{"role": "system", "content": prompt}, *history]
        withheld = await self._tools_withheld()

        while self.round_no < self.opts.max_rounds:
            self.round_no += 1
            rnd = self._expose(exposure, withheld=withheld)
            if not self.cap_noted and (note := cap_note_of(rnd, loop.registry)):  # once: stable in the turn
                self.messages[0] = {"role": "system", "content": f"{prompt}\n{note}"}
                self.cap_noted = True
            self.partial = []
            self.shown = StreamRedactor()
            self.partial_reasoning = []
            t0 = time.perf_counter()
            try:
                completion = await self.provider.stream(
                    self.messages,
                    list(rnd.schemas),
                    on_text=self._on_text,
                    on_reasoning=self._on_reasoning,
                    on_retract=self._on_retract,
                    params=self.plan.params,
                )
            except ProviderError as exc:
                return await self._provider_failed(exc)
            log.debug("round %d streamed in %.0f ms", self.round_no, (time.perf_counter() - t0) * 1000)
            await turn_extras.report_usage(self, completion, rnd.schemas)  # the endpoint's, else estimated (≈)
            completion.text = clean_text(completion.text)  # lone surrogates from the model become U+FFFD
            rest = self.shown.finish()
            if rest:
                self.emit(ev.TextDelta, text=rest)
            answer = await redact_off_loop(completion.text)  # an answer that echoes a secret: masked when stored
            calls = completion.tool_calls
            for c in calls:
                c.id, c.name, c.arguments = clean_text(c.id), clean_text(c.name), clean_text(c.arguments)
            completion.reasoning = await redact_off_loop(clean_text(completion.reasoning))
            completion.text = answer  # the stored, sent-back and shown answer is the masked one
            assistant = completion.message()  # with its reasoning and opaque fields (the provider decides)
            call_dicts = list(assistant.get("tool_calls") or [])
            refs = {c.id: (ref.tool, ref.action) for c in calls if (ref := loop.registry.resolve(c.name))}
            await self.durable(
                loop.history.add_assistant(
                    self.session_id,
                    self.run_id,
                    self.round_no,
                    answer,
                    call_dicts,
                    refs=refs,
                    reasoning=completion.reasoning,
                    meta=completion.meta(),
                )
            )
            self.partial = []
            self.partial_reasoning = []
            self.calls.open_calls = {c.id: c for c in calls}
            self.messages.append(assistant)
            self.emit(
                ev.AssistantMessage,
                text=answer,
                tool_calls=call_dicts,
                reasoning=completion.reasoning,
                reasoning_ms=completion.reasoning_ms,
            )
            if not calls:
                message = "" if answer else "The model returned an empty answer."
                return self._done("completed", text=answer, message=message)
            tripped = await self.calls.run_round(calls, rnd, exposure)
            turn_extras.show_tool_images(self)  # a screenshot / MCP picture reaches the model next round
            if tripped:
                message = (
                    f"Stopped: the model called {tripped} with the same arguments "
                    f"{self.opts.loop_guard_repeats} times. Rephrase the request or give more details."
                )
                return self._done("loop_guard", message=message)
        message = (
            f"Stopped after {self.opts.max_rounds} rounds without a final answer. "
            "Ask again to continue, or split the task into smaller steps."
        )
        return self._done("max_rounds", message=message)

    def _on_text(self, piece: str) -> None:
        # a surrogate pair split across two deltas is joined; any other lone surrogate shows as U+FFFD
        piece, self._high = self._high + piece, ""
        if piece and "\ud800" <= piece[-1] <= "\udbff":
            piece, self._high = piece[:-1], piece[-1]
        piece = clean_text(piece)
        self.partial.append(piece)
        shown = self.shown.feed(piece)  # held back to the last word, so a token is masked before it shows
        if shown:
            self.emit(ev.TextDelta, text=shown)

    # --- reasoning models (see agent/provider/) --------------------------------------------------------
    def _on_reasoning(self, piece: str) -> None:
        piece = clean_text(piece)  # lone surrogates show as U+FFFD (a pair split across deltas shows two)
        self.partial_reasoning.append(piece)
        self.emit(ev.ReasoningDelta, text=redact(piece))  # the whole thought is masked again when it ends

    def _on_retract(self, text: str) -> None:
        """Streamed answer text was thinking (an implicit ``<think>``): it moves to the reasoning."""
        self.partial = []
        if text:
            self.partial_reasoning.append(text)
        self.emit(ev.ReasoningRetracted, text=text)

    async def _tools_withheld(self) -> bool:
        """Whether the model is marked as not supporting tools (then none are offered, and the user is told)."""
        provider = self.provider  # the chat's own (TurnPlan), else the loop's
        try:
            caps = await provider.capabilities()
        except Exception:  # capabilities are advice: never let them break a turn
            log.exception("could not resolve the capabilities of %s", provider.config.model)
            return False
        if not caps.tools_withheld:
            return False
        who = {"you": "in Settings", "endpoint": "by the endpoint", "profile": "by the provider profile"}
        reason = (
            f"The model '{caps.model}' is marked as not supporting tools ({who.get(caps.source('tools'), '')}), "
            "so no tools are offered: it can answer, but not act. Choose a model with tool calling, or change its "
            "capabilities in Settings."
        )
        self.emit(ev.ToolsWithheld, model=caps.model, reason=reason)
        return True

    @staticmethod
    def _without_tools(rnd: Exposure) -> Exposure:
        """The round's offer for a model without tools: nothing (a call it makes anyway is refused as not offered)."""
        dropped = {**rnd.dropped, **dict.fromkeys(rnd.tools, "the model does not support tools")}
        return dataclasses.replace(rnd, tools=(), functions=(), schemas=(), dropped=dropped, capped={}, tier="withheld")

    # --- exposure -----------------------------------------------------------------------------------
    def _expose(self, exposure: TurnExposure, *, withheld: bool = False) -> Exposure:
        """The round's offer: the one exposure computation, with this turn's circuit breaker and routing."""
        registry = self.loop.registry
        blocked = turn_extras.outside_assistant(registry, self.plan)
        blocked.update({tool: self._circuit_open(tool) for tool in self.breaker.open})
        rnd = self.loop.dispatcher.exposure.compute(exposure, blocked=blocked, schemas=True)
        if withheld:
            rnd = self._without_tools(rnd)
        hidden = {t: [d.code.value for d in ds] for t, ds in rnd.hidden.items()}
        log.info(
            "round %d run=%s registered=%d visible=%d hidden=%d %s routed(%s)=%d %s sent=%d functions %s%s",
            self.round_no,
            self.run_id,
            len(registry.tool_names(include_disabled=True)),
            len(rnd.visible),
            len(hidden),
            hidden,
            rnd.tier,
            len(rnd.tools),
            dict(rnd.reasons),
            len(rnd.functions),
            list(rnd.functions),
            f" dropped={dict(rnd.dropped)}" if rnd.dropped else "",
        )
        self.emit(
            ev.RoundStarted,
            round=self.round_no,
            tools=list(rnd.tools),
            functions=list(rnd.functions),
            hidden=hidden,
            tier=rnd.tier,
            intents=list(rnd.intents),
            dropped=dict(rnd.dropped),
        )
        return rnd

    def _circuit_open(self, tool: str) -> Diagnostic:
        return Diagnostic(
            code=Code.CIRCUIT_OPEN,
            message=f"{tool} failed {self.opts.circuit_failures} times in a row and is switched off for the rest of "
            "this turn",
            hint="Use another approach or tell the user what went wrong.",
        )

    # --- failure paths --------------------------------------------------------------------------------
    async def _provider_failed(self, exc: ProviderError) -> ev.TurnDone:
        partial = redact("".join(self.partial) or exc.partial)
        thought = redact("".join(self.partial_reasoning) or exc.partial_reasoning)
        if partial or thought:
            await self.durable(
                self.loop.history.add_assistant(
                    self.session_id, self.run_id, self.round_no, partial, [], status="partial", reasoning=thought
                )
            )
        self.emit(ev.ErrorOccurred, message=exc.message, kind=exc.kind, retryable=exc.retryable)
        return self._done("error", text=partial, message=exc.message)

    async def _after_cancel(self) -> None:
        """Stop: record what happened. Runs while the task is being cancelled, so it must not block long."""
        if self.writes:
            await asyncio.gather(*list(self.writes), return_exceptions=True)
        partial = redact("".join(self.partial))
        thought = redact("".join(self.partial_reasoning))
        message = "Stopped by the user."
        try:
            if partial or thought:
                await self.loop.history.add_assistant(
                    self.session_id, self.run_id, self.round_no, partial, [], status="cancelled", reasoning=thought
                )
            await self.calls.close_open(
                "The user stopped this call before it finished.", ToolStatus.CANCELLED, ErrorKind.CANCELLED
            )
            if self.writes:
                await asyncio.gather(*list(self.writes), return_exceptions=True)
            await self.loop.history.finish_turn(self.run_id, "cancelled", self.round_no, message)
        except StorageError as exc:  # the next use of the session closes what could not be written
            log.warning("could not record the stop of turn %s: %s", self.run_id, exc)
        self.emit_done(self._done("cancelled", text=partial, message=message))
