"""The dispatcher turns every bad input into a CallOutcome the model can act on (a ToolResult plus a typed
error kind and decider), and audits every call."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from helpers import manifest
from sample_tools import FaultyTool
from toolrun import tool_context

from weclaw_desktop.toolkit import (
    NO_ROUND,
    ApprovalDecision,
    ApprovalGate,
    ApprovalPolicy,
    ApprovalRequest,
    ApprovalResult,
    BeforeOutcome,
    CallOutcome,
    DecidedBy,
    Dispatcher,
    ErrorKind,
    Hooks,
    MemoryAudit,
    Origin,
    Policy,
    Risk,
    Stage,
    StageEvent,
    ToolCall,
    ToolContext,
    ToolRegistry,
    ToolResult,
    ToolStatus,
)


class RecordingGate:
    def __init__(self, decision: ApprovalDecision) -> None:
        self.decision = decision
        self.requests: list[ApprovalRequest] = []

    async def request(self, req: ApprovalRequest) -> ApprovalResult:
        self.requests.append(req)
        return ApprovalResult(self.decision, decided_by=DecidedBy.USER)


class Bench:
    """A dispatcher and the gate its calls get (the gate is an argument of every dispatch)."""

    def __init__(self, dispatcher: Dispatcher, gate: ApprovalGate | None) -> None:
        self.dispatcher = dispatcher
        self.gate = gate


def make(*, gate: ApprovalGate | None = None, **kwargs: Any) -> tuple[Bench, MemoryAudit]:
    audit = MemoryAudit()
    return Bench(Dispatcher(ToolRegistry(manifest()), audit=audit, **kwargs), gate), audit


def ctx(**kwargs: Any) -> ToolContext:
    kwargs.setdefault("session_id", "s1")
    return tool_context(run_id="r1", origin=kwargs.pop("origin", Origin.GUI), **kwargs)


async def outcome(d: Bench | Dispatcher, name: str, args: Any, **kwargs: Any) -> CallOutcome:
    bench = d if isinstance(d, Bench) else Bench(d, None)
    raw = args if isinstance(args, str) else json.dumps(args)
    return await bench.dispatcher.dispatch(
        ToolCall(id="c1", name=name, arguments=raw),
        kwargs.pop("context", None) or ctx(),
        gate=bench.gate,
        offered=kwargs.pop("offered", NO_ROUND),
        **kwargs,
    )


async def call(d: Bench | Dispatcher, name: str, args: Any, **kwargs: Any) -> ToolResult:
    return (await outcome(d, name, args, **kwargs)).result


async def test_success_and_audit_record() -> None:
    d, audit = make()
    result = await call(d, "echo_say", {"text": "hi", "times": 2})
    assert result.status is ToolStatus.SUCCESS
    assert result.output == "hi hi" and result.data == {"n": 2}
    (rec,) = audit.records
    assert (rec.tool, rec.action, rec.function, rec.status, rec.session_id) == (
        "echo",
        "say",
        "echo_say",
        "success",
        "s1",
    )
    assert rec.approval == "allow_once" and rec.decided_by == "policy"
    assert (rec.approval, rec.decided_by, rec.risk, rec.error_kind) == (
        ApprovalDecision.ALLOW_ONCE,
        DecidedBy.POLICY,
        Risk.LOW,
        None,
    )
    assert rec.result_len == len(result.for_model()) and rec.duration_ms >= 0


async def test_empty_arguments_mean_an_empty_object() -> None:
    d, _ = make()
    result = await call(d, "echo_say", "")
    assert result.status is ToolStatus.ERROR
    assert "text: Field required" in result.output


async def test_invalid_json_tells_the_model_how_to_fix_it() -> None:
    d, audit = make()
    out = await outcome(d, "echo_say", '{"text": "hi"')
    result = out.result
    assert out.error is ErrorKind.INVALID_JSON and not out.ran and out.decided_by is None
    assert audit.records[0].error_kind is ErrorKind.INVALID_JSON
    assert result.status is ToolStatus.ERROR
    assert result.output.startswith("The arguments of echo_say are not valid JSON (Expecting ',' delimiter")
    assert "call again" in result.output
    assert audit.records[0].status == "error"


async def test_json_that_is_not_an_object() -> None:
    d, _ = make()
    result = await call(d, "echo_say", "[1, 2]")
    assert "expected a JSON object, got list" in result.output


async def test_double_encoded_arguments_are_accepted() -> None:
    d, _ = make()
    result = await call(d, "echo_say", json.dumps(json.dumps({"text": "ok"})))
    assert result.output == "ok"


async def test_schema_violation_lists_each_error() -> None:
    d, _ = make()
    out = await outcome(d, "echo_say", {"text": "", "times": 9, "loud": True})
    result = out.result
    assert out.error is ErrorKind.INVALID_ARGUMENTS and not out.ran
    assert result.status is ToolStatus.ERROR
    lines = result.output.splitlines()
    assert lines[0] == "Invalid arguments for echo_say:"
    assert "- unknown argument 'loud' (valid: text, times)" in lines
    assert any(line.startswith("- text: String should have at least 1 character") for line in lines)
    assert any(line.startswith("- times: Input should be less than or equal to 5") for line in lines)
    assert lines[-1] == "Fix the arguments and call again."


async def test_unknown_function_lists_the_offered_names() -> None:
    d, audit = make()
    offered = d.dispatcher.exposure.compute()  # every visible tool: echo and faulty (bridged has no bridge)
    out = await outcome(d, "echo_sing", {}, offered=offered)
    result = out.result
    assert result.status is ToolStatus.ERROR and out.error is ErrorKind.UNKNOWN_FUNCTION
    assert out.risk is None and out.tool == ""
    assert (
        "There is no function named 'echo_sing'. You can call: echo_say, echo_shout, faulty_crash, faulty_refuse, "
        "faulty_sleep, faulty_nested." in result.output
    )
    assert audit.records[0].tool == "" and audit.records[0].function == "echo_sing"
    assert audit.records[0].error_kind is ErrorKind.UNKNOWN_FUNCTION and audit.records[0].risk is None


async def test_a_tool_that_raises_becomes_an_error_result_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    d, audit = make()
    out = await outcome(d, "faulty_crash", {"text": "x"})
    result = out.result
    assert result.status is ToolStatus.ERROR and out.error is ErrorKind.TOOL_CRASHED and out.ran
    assert result.output.startswith("faulty_crash failed: RuntimeError: boom: x.")
    assert any("tool faulty_crash raised" in r.getMessage() and r.exc_info for r in caplog.records)
    assert audit.records[0].error_summary.startswith("faulty_crash failed: RuntimeError: boom: x.")


async def test_expected_tool_error_passes_its_message() -> None:
    d, _ = make()
    out = await outcome(d, "faulty_refuse", {"text": "that"})
    assert (out.status, out.result.output, out.error) == (ToolStatus.ERROR, "cannot do 'that'", ErrorKind.TOOL_ERROR)


async def test_a_hanging_tool_is_stopped_at_its_timeout() -> None:
    d, audit = make()
    before = FaultyTool.finished
    result = await call(d, "faulty_sleep", {"seconds": 30})
    assert result.status is ToolStatus.TIMEOUT
    assert result.output.startswith("faulty_sleep did not finish within 0.5 s and was stopped.")
    assert FaultyTool.finished == before + 1  # the tool's own cleanup ran
    assert audit.records[0].status == "timeout" and audit.records[0].error_kind is ErrorKind.TIMEOUT
    assert 400 < result.duration_ms < 5000


async def test_cancellation_is_recorded_and_re_raised() -> None:
    d, audit = make()
    seen: list[StageEvent] = []
    started = asyncio.Event()

    def observe(event: StageEvent) -> None:
        seen.append(event)
        if event.stage is Stage.STARTED:
            started.set()

    task = asyncio.create_task(call(d, "faulty_sleep", {"seconds": 0.4}, observer=observe))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert audit.records[0].status == "cancelled" and audit.records[0].error_kind is ErrorKind.CANCELLED
    assert seen[-1].stage is Stage.FINISHED and seen[-1].result is not None
    assert seen[-1].result.status is ToolStatus.CANCELLED
    assert seen[-1].outcome is not None and seen[-1].outcome.error is ErrorKind.CANCELLED


async def test_high_risk_asks_and_deny_does_not_run() -> None:
    gate = RecordingGate(ApprovalDecision.DENY)
    d, audit = make(gate=gate)
    out = await outcome(d, "echo_shout", {"text": "hey"})
    result = out.result
    assert result.status is ToolStatus.DENIED
    assert (out.error, out.decided_by, out.approval, out.risk, out.ran) == (
        ErrorKind.DENIED,
        DecidedBy.USER,
        ApprovalDecision.DENY,
        Risk.HIGH,
        False,
    )
    assert result.output.startswith("The user did not allow echo_shout.")
    (req,) = gate.requests
    assert (req.risk.value, req.origin.value, req.arguments) == ("high", "gui", {"text": "hey"})
    assert (audit.records[0].approval, audit.records[0].decided_by) == ("deny", "user")


async def test_allow_for_session_is_remembered_per_session() -> None:
    gate = RecordingGate(ApprovalDecision.ALLOW_SESSION)
    d, audit = make(gate=gate)
    assert (await call(d, "echo_shout", {"text": "a"})).output == "A"
    assert (await call(d, "echo_shout", {"text": "b"})).output == "B"
    assert len(gate.requests) == 1
    assert audit.records[1].decided_by == "session"
    await call(d, "echo_shout", {"text": "c"}, context=ctx(session_id="other"))
    assert len(gate.requests) == 2


async def test_no_gate_means_denied_and_schedule_origin_is_stricter() -> None:
    d, _ = make()
    out = await outcome(d, "echo_shout", {"text": "a"})
    result = out.result
    assert result.status is ToolStatus.DENIED and out.decided_by is DecidedBy.NO_GATE
    assert result.output.startswith("echo_shout needs approval, but no one is there to approve it.")
    gate = RecordingGate(ApprovalDecision.ALLOW_ONCE)
    d, _ = make(gate=gate)
    result = await call(d, "echo_shout", {"text": "a"}, context=ctx(origin=Origin.SCHEDULE))
    assert result.status is ToolStatus.DENIED and gate.requests == []


async def test_remembered_approval_skips_the_prompt() -> None:
    gate = RecordingGate(ApprovalDecision.DENY)
    d, audit = make(gate=gate, approval_policy=ApprovalPolicy(remembered=["echo_shout"]))
    assert (await call(d, "echo_shout", {"text": "x"})).output == "X"
    assert gate.requests == [] and audit.records[0].decided_by == "remembered"


async def test_hooks_rewrite_block_and_after() -> None:
    hooks = Hooks()

    async def rewrite(hc: Any) -> BeforeOutcome | None:
        return BeforeOutcome.rewrite({**hc.arguments, "text": hc.arguments["text"] + "!"})

    async def block_secret(hc: Any) -> BeforeOutcome | None:
        return BeforeOutcome.blocked("That text is not allowed.") if "secret" in hc.arguments["text"] else None

    async def after(hc: Any, result: ToolResult) -> ToolResult | None:
        return result.model_copy(update={"output": f"[{result.output}]"})

    hooks.add_before(rewrite, tools="echo_say")
    hooks.add_before(block_secret)
    remove_after = hooks.add_after(after, tools="echo_*")
    d, audit = make(hooks=hooks)
    assert (await call(d, "echo_say", {"text": "hi"})).output == "[hi!]"
    blocked = await outcome(d, "echo_say", {"text": "secret"})
    assert (blocked.status, blocked.result.output) == (ToolStatus.DENIED, "That text is not allowed.")
    assert (blocked.decided_by, blocked.hook, blocked.error) == (DecidedBy.HOOK, "block_secret", ErrorKind.DENIED)
    assert (audit.records[-1].decided_by, audit.records[-1].hook) == ("hook", "block_secret")
    remove_after()
    assert (await call(d, "echo_say", {"text": "yo"})).output == "yo!"


async def test_hook_rewrite_is_validated_and_hook_can_require_approval() -> None:
    hooks = Hooks()

    async def bad(hc: Any) -> BeforeOutcome | None:
        return BeforeOutcome.rewrite({"text": 5})

    remove = hooks.add_before(bad)
    d, _ = make(hooks=hooks)
    out = await outcome(d, "echo_say", {"text": "x"})
    assert out.result.output.startswith("Hook 'bad' produced invalid arguments: text: Input should be a valid string")
    assert (out.error, out.hook) == (ErrorKind.HOOK_FAILED, "bad")
    remove()

    async def ask(hc: Any) -> BeforeOutcome | None:
        return BeforeOutcome.ask("mentions money")

    hooks.add_before(ask)
    gate = RecordingGate(ApprovalDecision.DENY)
    d, _ = make(hooks=hooks, gate=gate)
    result = await call(d, "echo_say", {"text": "x"})
    assert result.status is ToolStatus.DENIED
    assert gate.requests[0].reason == "mentions money"


async def test_hidden_tools_are_refused_with_their_diagnostic() -> None:
    d, _ = make(policy=Policy(disabled=["echo"]))
    out = await outcome(d, "echo_say", {"text": "x"})
    result = out.result
    assert (out.error, out.decided_by) == (ErrorKind.DISABLED, DecidedBy.POLICY)
    assert result.status is ToolStatus.DENIED
    assert result.output == (
        "echo_say is not available right now: [disabled-by-user] switched off by you. "
        "Turn it back on in the tool panel. Do not call it again in this conversation; tell the user what is needed."
    )
    d, _ = make()
    out = await outcome(d, "bridged_paste", {"seconds": 0})
    assert out.status is ToolStatus.ERROR and "[bridge-missing]" in out.result.output
    assert out.error is ErrorKind.UNAVAILABLE and out.decided_by is None


async def test_concurrency_limit_is_honoured() -> None:
    data = manifest().model_dump(by_alias=True)
    data["tools"]["faulty"]["concurrency"] = 1
    data["tools"]["faulty"]["timeout_s"] = 5
    from weclaw_desktop.toolkit.manifest import Manifest

    d = Dispatcher(ToolRegistry(Manifest.model_validate(data)))
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    results = await asyncio.gather(*(call(d, "faulty_sleep", {"seconds": 0.2}) for _ in range(3)))
    assert all(r.output == "slept" for r in results)
    assert loop.time() - t0 >= 0.55  # three 0.2 s calls one after another


async def test_audit_failure_does_not_lose_the_result(caplog: pytest.LogCaptureFixture) -> None:
    class BrokenAudit:
        async def record(self, rec: Any) -> None:
            raise OSError("disk full")

    d = Dispatcher(ToolRegistry(manifest()), audit=BrokenAudit())
    result = await call(d, "echo_say", {"text": "kept"})
    assert result.output == "kept"
    assert any("audit record failed" in r.getMessage() for r in caplog.records)


async def test_a_hook_that_raises_fails_only_its_call(caplog: pytest.LogCaptureFixture) -> None:
    """The error is reported (log + a hook-failed outcome), never swallowed, and the next call still works."""
    hooks = Hooks()

    async def broken(hc: Any) -> BeforeOutcome | None:
        raise RuntimeError("hook bug")

    remove = hooks.add_before(broken, tools="echo_say", name="broken")
    d, audit = make(hooks=hooks)
    out = await outcome(d, "echo_say", {"text": "x"})
    assert (out.status, out.error, out.hook, out.ran) == (ToolStatus.ERROR, ErrorKind.HOOK_FAILED, "broken", False)
    assert "internal error (RuntimeError)" in out.result.output
    assert any("dispatch of echo_say failed" in r.getMessage() and r.exc_info for r in caplog.records)
    assert audit.records[-1].error_kind is ErrorKind.HOOK_FAILED
    remove()
    assert (await call(d, "echo_say", {"text": "x"})).output == "x"
