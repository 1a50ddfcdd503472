"""What the tool panel shows, without widgets: each tool's state and each call's live status.

State of a tool, strongest first: ``off`` (the user's switch), ``hidden`` (the diagnostics of the exposure
computation, ``toolkit/exposure.py``), ``exposed`` (offered to the model for the current request, from
the round's ``RoundStarted``), ``available``. Calls are tracked by the
``call_id`` of the typed turn events, so parallel calls of one tool are kept apart.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from weclaw_desktop.agent import events as ev
from weclaw_desktop.agent.call_times import running_ms
from weclaw_desktop.settings.conversation import tool_matcher
from weclaw_desktop.toolkit.availability import AvailabilityContext
from weclaw_desktop.toolkit.diagnostics import Code, Diagnostic
from weclaw_desktop.toolkit.exposure import ExposurePlanner
from weclaw_desktop.toolkit.policy import Policy
from weclaw_desktop.toolkit.registry import ToolRegistry

FINAL = frozenset({"success", "error", "timeout", "denied", "cancelled", "interrupted"})


@dataclass
class CallInfo:
    call_id: str
    function: str
    tool: str
    action: str
    arguments: str = ""
    #: queued | awaiting_approval | running | success | error | timeout | denied | cancelled | interrupted
    status: str = "queued"
    risk: str = ""
    started: float | None = None  # time.monotonic() when it started running
    duration_ms: float | None = None  # the dispatcher's whole time (approval wait included)
    run_ms: float | None = None  # from started to finished: the tool's own running time
    waited_s: float = 0.0  # time spent waiting for the user's approval
    wait_since: float | None = None  # time.monotonic() when it began waiting (while it waits)
    fraction: float | None = None
    message: str = ""
    output: str = ""
    error: str = ""
    files: list[str] = field(default_factory=list)
    error_kind: str = ""  # ErrorKind value when it did not succeed
    decided_by: str = ""  # DecidedBy value when someone decided
    truncated: bool = False
    restored: bool = False  # read back from the history (no live timing)
    at: float = field(default_factory=time.time)

    @property
    def finished(self) -> bool:
        return self.status in FINAL

    def elapsed_s(self) -> float | None:
        """The running time: while it runs, since it started; after, the tool's own time (not the wait)."""
        if self.run_ms is not None:
            return self.run_ms / 1000
        if self.started is not None and not self.finished:
            return time.monotonic() - self.started
        if self.duration_ms is not None:
            return max(0.0, self.duration_ms / 1000 - self.waited_s)
        return None

    def set_times(self, duration_ms: float | None, waited_ms: float | None) -> None:
        """The dispatcher's facts of a finished call, live (``ToolCallFinished``) or stored (a reopened chat):
        its whole time and the part spent waiting for approval. With the wait known, the running time is the
        whole minus the wait — the same arithmetic both ways, so a reopened card says what the live one said;
        without it (an older history, a call the loop closed) the running time stays as it was."""
        if duration_ms is not None:
            self.duration_ms = duration_ms
        if waited_ms is None:
            return
        self.waited_s = waited_ms / 1000
        if self.duration_ms is not None:
            self.run_ms = running_ms(self.duration_ms, waited_ms)

    def waiting_s(self) -> float:
        """Time spent waiting for approval so far."""
        if self.wait_since is not None:
            return self.waited_s + time.monotonic() - self.wait_since
        return self.waited_s


@dataclass
class ToolRow:
    name: str
    state: str  # exposed | available | hidden | off
    diagnostics: list[Diagnostic] = field(default_factory=list)
    calls: int = 0
    active: list[CallInfo] = field(default_factory=list)
    last: CallInfo | None = None


#: Diagnostics the user's switch undoes: the row shows "off" with its box unticked.
_SWITCHED_OFF = (Code.DISABLED_BY_USER, Code.DISABLED_SETTINGS_UNREADABLE)


class ToolBoard:
    def __init__(
        self,
        registry: ToolRegistry,
        policy: Callable[[], Policy],
        availability: Callable[[], AvailabilityContext] = AvailabilityContext,
    ) -> None:
        self.registry = registry
        self._exposure = ExposurePlanner(registry, policy=policy, availability=availability)
        self.exposed: set[str] = set()
        self.calls: dict[str, CallInfo] = {}
        self.order: list[str] = []  # call ids, oldest first
        self.rows: dict[str, ToolRow] = {}
        self._listeners: list[Callable[[set[str]], None]] = []
        self.assistant = ""  # the open chat's assistant
        self.assistant_tools: tuple[str, ...] | None = None  # its tool profile (None: every tool)
        self.refresh()

    # --- listeners ------------------------------------------------------------------------------
    def subscribe(self, callback: Callable[[set[str]], None]) -> None:
        """``callback(changed_tools)``; an empty set means "everything may have changed"."""
        self._listeners.append(callback)

    def _emit(self, changed: set[str]) -> None:
        for callback in list(self._listeners):
            callback(changed)

    # --- tool states ----------------------------------------------------------------------------
    def refresh(self) -> None:
        """Recompute which tools are available (after injection, a settings change, a switch)."""
        result = self._exposure.compute(blocked=self._outside_assistant())
        rows: dict[str, ToolRow] = {}
        for name in self.registry.tool_names(include_disabled=True):
            old = self.rows.get(name)
            diagnostics = result.hidden.get(name, ())
            if any(d.code in _SWITCHED_OFF for d in diagnostics):
                state = "off"
            elif diagnostics:
                state = "hidden"
            elif name in self.exposed:
                state = "exposed"
            else:
                state = "available"
            row = ToolRow(name=name, state=state, diagnostics=list(diagnostics))
            if old is not None:
                row.calls, row.active, row.last = old.calls, old.active, old.last
            rows[name] = row
        self.rows = rows
        self._emit(set())

    def set_assistant(self, name: str, tools: list[str] | tuple[str, ...] | None) -> None:
        """The open chat's assistant and its tool profile (None: every tool): tools outside it show as hidden
        with the reason, as the loop hides and refuses them."""
        profile = None if tools is None else tuple(tools)
        if (name, profile) == (self.assistant, self.assistant_tools):
            return
        self.assistant, self.assistant_tools = name, profile
        self.refresh()

    def _outside_assistant(self) -> dict[str, Diagnostic]:
        if self.assistant_tools is None:
            return {}
        allows = tool_matcher(self.assistant_tools)
        why = Diagnostic.of(Code.DISABLED_BY_ASSISTANT, "assistant", "assistant", assistant=self.assistant)
        return {t: why for t in self.registry.tool_names() if not allows(t)}

    def state(self, tool: str) -> str:
        return self.rows[tool].state

    def set_exposed(self, tools: set[str]) -> None:
        changed = self.exposed ^ tools
        self.exposed = set(tools)
        for name in changed:
            row = self.rows.get(name)
            if row is not None and row.state in ("exposed", "available"):
                row.state = "exposed" if name in self.exposed else "available"
        self._emit(changed & set(self.rows))

    # --- calls ----------------------------------------------------------------------------------
    def running_count(self) -> int:
        return sum(1 for c in self.calls.values() if not c.finished)

    def total_calls(self) -> int:
        return len(self.calls)

    def handle(self, event: ev.Event) -> CallInfo | None:
        """Apply one turn event; returns the call it changed, if any."""
        if isinstance(event, ev.RoundStarted):
            self.set_exposed(set(event.tools))
            return None
        if isinstance(event, ev.TurnDone):
            for pending in list(self.calls.values()):
                if not pending.finished:
                    self._finish(pending, "cancelled" if event.reason == "cancelled" else "error")
            return None
        call_id = getattr(event, "call_id", None)
        if call_id is None:
            return None
        call: CallInfo | None = self.calls.get(call_id)
        if isinstance(event, ev.ToolCallRequested):
            call = CallInfo(call_id, event.function, event.tool, event.action, arguments=event.arguments)
            self.calls[call_id] = call
            self.order.append(call_id)
            row = self.rows.get(event.tool)
            if row is not None:
                row.calls += 1
                row.active.append(call)
                row.last = call
        elif call is None:
            return None
        elif isinstance(event, ev.ToolCallAwaitingApproval):
            call.status, call.risk = "awaiting_approval", str(event.risk)
            call.wait_since = time.monotonic()
        elif isinstance(event, ev.ToolCallApproved):
            call.status = "queued"
            call.decided_by = str(event.decided_by)
            self._end_wait(call)
        elif isinstance(event, ev.ToolCallDenied):
            self._end_wait(call)
            call.decided_by, call.error_kind = str(event.decided_by), str(event.error_kind)
            self._finish(call, "denied")
            call.error = event.reason
        elif isinstance(event, ev.ToolCallStarted):
            self._end_wait(call)
            call.status, call.started = "running", time.monotonic()
        elif isinstance(event, ev.ToolCallProgress):
            call.fraction, call.message = event.fraction, event.message
        elif isinstance(event, ev.ToolCallFinished):
            self._end_wait(call)
            call.output, call.error, call.files = event.output, event.error, list(event.files)
            call.truncated = event.truncated
            if event.error_kind is not None:
                call.error_kind = str(event.error_kind)
            if event.decided_by is not None and not call.decided_by:
                call.decided_by = str(event.decided_by)
            if call.started is not None:
                call.run_ms = (time.monotonic() - call.started) * 1000
            call.set_times(event.duration_ms, event.waited_ms)  # the dispatcher's wait and run time, as stored
            self._finish(call, event.status, event.duration_ms)
        else:
            return None
        self._emit({call.tool})
        return call

    @staticmethod
    def _end_wait(call: CallInfo) -> None:
        if call.wait_since is not None:
            call.waited_s += time.monotonic() - call.wait_since
            call.wait_since = None

    def _finish(self, call: CallInfo, status: str, duration_ms: float | None = None) -> None:
        call.status = str(status)
        if duration_ms is not None:
            call.duration_ms = duration_ms
        elif call.started is not None and call.duration_ms is None:
            call.duration_ms = (time.monotonic() - call.started) * 1000
        row = self.rows.get(call.tool)
        if row is not None and call in row.active:
            row.active.remove(call)
        self._emit({call.tool})

    def reset_session(self) -> None:
        """A different chat is shown: per-session counters and exposure start over."""
        self.calls.clear()
        self.order.clear()
        self.exposed.clear()
        for row in self.rows.values():
            row.calls, row.active, row.last = 0, [], None
        self.refresh()
