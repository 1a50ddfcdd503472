"""Stop (task.cancel) during a stream and during a tool; approvals; progress; exposure per round."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import psutil
from agent_support import make_settings, of, run_turn
from fakeopenai import FakeOpenAI, call, hang_reply, text_reply, tool_reply
from polling import until

from weclaw_desktop.intent.api import RoundExposure, TurnRequest
from weclaw_desktop.toolkit.approval import ApprovalDecision, ApprovalRequest, ApprovalResult, AutoDeny
from weclaw_desktop.toolkit.base import ToolResult


async def test_stop_during_the_stream(fake_openai: FakeOpenAI, make_runtime) -> None:
    rt = await make_runtime()
    s = await rt.create_session()
    fake_openai.push(hang_reply("Once upon", " a time"))
    events: list = []
    handle = rt.start_turn(s.id, "tell a story", on_event=events.append)
    await asyncio.wait_for(fake_openai.hanging.wait(), 10)
    await until(lambda: len(of(events, "text_delta")) == 2, within=10)

    assert handle.cancel()
    done = await handle.wait()
    assert handle.task.cancelled()
    assert done.reason == "cancelled" and done.text == "Once upon a time" and done.message == "Stopped by the user."
    await until(lambda: fake_openai.disconnects == 1, within=10)  # the HTTP response was closed, not left hanging
    stored = await rt.load_messages(s.id)
    assert [(m.role, m.content, m.status) for m in stored] == [
        ("user", "tell a story", "complete"),
        ("assistant", "Once upon a time", "cancelled"),
    ]
    assert await rt.history.turn_status(done.run_id) == "cancelled"
    assert rt.running_turn(s.id) is None

    fake_openai.push(text_reply("The end."))
    done2, _, _ = await run_turn(rt, "finish it", s.id)
    assert done2.text == "The end."
    roles = [m["role"] for m in fake_openai.messages()]
    assert roles == ["system", "user", "assistant", "user"]


async def test_stop_during_a_tool_kills_its_child_process(fake_openai: FakeOpenAI, make_runtime, weclaw_home) -> None:
    rt = await make_runtime()
    s = await rt.create_session()
    fake_openai.push(tool_reply(call("proc_sleep", {"seconds": 60}, id="long")))
    events: list = []
    handle = rt.start_turn(s.id, "wait a minute", on_event=events.append)
    pid_file = Path(rt.loop.tool_env.outputs_dir) / "child.pid"
    await until(pid_file.exists, within=10)
    pid = int(pid_file.read_text())
    child = psutil.Process(pid)
    assert child.is_running()
    await until(lambda: bool(of(events, "tool_call_progress")), within=10)

    rt.cancel(s.id)
    done = await handle.wait()
    assert done.reason == "cancelled"
    await until(lambda: not psutil.pid_exists(pid) or child.status() == psutil.STATUS_ZOMBIE, within=5)
    progress = of(events, "tool_call_progress")[0]
    assert (progress.call_id, progress.message) == ("long", "child started")

    fin = of(events, "tool_call_finished")[-1]
    assert fin.call_id == "long" and fin.status == "cancelled"
    calls = await rt.tool_calls(s.id)
    assert [(c.call_id, c.status) for c in calls] == [("long", "cancelled")]
    audit = await rt.audit.records(session_id=s.id)
    assert [(a.function, a.status) for a in audit] == [("proc_sleep", "cancelled")]

    fake_openai.push(text_reply("ok, stopped"))
    done2, _, _ = await run_turn(rt, "never mind", s.id)
    assert done2.reason == "completed"
    sent = fake_openai.messages()
    tool_msg = next(m for m in sent if m["role"] == "tool")
    assert tool_msg["tool_call_id"] == "long" and "stopped" in tool_msg["content"]


class CountingGate:
    def __init__(self, decision: ApprovalDecision) -> None:
        self.decision = decision
        self.requests: list[ApprovalRequest] = []

    async def request(self, req: ApprovalRequest) -> ApprovalResult:
        self.requests.append(req)
        return ApprovalResult(self.decision, decided_by="user", note="" if self.decision.allowed else "no thanks")


async def test_denied_high_risk_call(fake_openai: FakeOpenAI, make_runtime) -> None:
    gate = CountingGate(ApprovalDecision.DENY)
    rt = await make_runtime(gate=gate)
    fake_openai.push(tool_reply(call("echo_shout", {"text": "hey"}, id="loud")), text_reply("I won't shout."))
    done, events, sid = await run_turn(rt, "shout hey")

    assert [(r.function, r.risk.value, r.origin.value) for r in gate.requests] == [("echo_shout", "high", "cli")]
    waiting = of(events, "tool_call_awaiting_approval")[0]
    assert (waiting.function, waiting.risk, waiting.arguments) == ("echo_shout", "high", {"text": "hey"})
    denied = of(events, "tool_call_denied")[0]
    assert (denied.call_id, denied.decided_by, denied.reason) == ("loud", "user", "no thanks")
    assert not of(events, "tool_call_started")
    assert of(events, "tool_call_finished")[0].status == "denied"
    audit = (await rt.audit.records(session_id=sid))[0]
    assert (audit.status, audit.approval, audit.decided_by) == ("denied", "deny", "user")
    assert done.text == "I won't shout."


async def test_allow_for_session_asks_once(fake_openai: FakeOpenAI, make_runtime) -> None:
    gate = CountingGate(ApprovalDecision.ALLOW_SESSION)
    rt = await make_runtime(gate=gate)
    fake_openai.push(
        tool_reply(call("echo_shout", {"text": "a"})),
        tool_reply(call("echo_shout", {"text": "b"})),
        text_reply("done"),
    )
    done, events, sid = await run_turn(rt, "shout twice")

    assert len(gate.requests) == 1
    assert [e.decided_by for e in of(events, "tool_call_approved")] == ["user"]
    assert [e.output for e in of(events, "tool_call_finished")] == ["A", "B"]
    audit = await rt.audit.records(session_id=sid)
    assert [(a.approval, a.decided_by) for a in audit] == [("allow_session", "user"), ("allow_once", "session")]
    # another conversation asks again
    fake_openai.push(tool_reply(call("echo_shout", {"text": "c"})), text_reply("ok"))
    await run_turn(rt, "shout")
    assert len(gate.requests) == 2
    assert done.reason == "completed"


async def test_deny_risky_policy_needs_no_gate(fake_openai: FakeOpenAI, make_runtime) -> None:
    settings = make_settings(fake_openai)
    settings.agent.approvals.rules["cli"] = {"low": "allow", "medium": "deny", "high": "deny"}
    rt = await make_runtime(settings, gate=AutoDeny())
    fake_openai.push(tool_reply(call("echo_shout", {"text": "x"}), call("echo_say", {"text": "y"})), text_reply("k"))
    _done, events, sid = await run_turn(rt, "go")

    statuses = {e.function: e.status for e in of(events, "tool_call_finished")}
    assert statuses == {"echo_shout": "denied", "echo_say": "success"}
    assert [e.decided_by for e in of(events, "tool_call_denied")] == ["policy"]
    assert not of(events, "tool_call_awaiting_approval")
    audit = {a.function: (a.approval, a.decided_by) for a in await rt.audit.records(session_id=sid)}
    assert audit["echo_shout"] == ("deny", "policy")


class RecordingExposer:
    """Exposes only 'echo' first, then whatever note_result saw fail plus 'faulty'."""

    def __init__(self) -> None:
        self.rounds: list[list[str]] = []
        self.noted: list[tuple[str, str, str]] = []
        self.started: list[tuple[str, list[list[str]]]] = []

    def start_turn(self, turn: TurnRequest) -> RecordingExposer:
        self.started.append((turn.text, [list(r) for r in turn.recent_tools]))
        return self

    def for_round(self, visible: Sequence[str]) -> RoundExposure:
        self.rounds.append(list(visible))
        tools = ["echo"] if not self.noted else ["echo", "faulty", "not_a_tool"]
        return RoundExposure(tools=tools, tier="recommended" if not self.noted else "expanded", intents=["talk"])

    def note_result(self, tool: str, action: str, result: ToolResult) -> None:
        self.noted.append((tool, action, result.status.value))


async def test_exposure_is_recomputed_every_round(fake_openai: FakeOpenAI, make_runtime) -> None:
    rt = await make_runtime()
    exposer = RecordingExposer()
    rt.loop.exposer = exposer
    fake_openai.push(tool_reply(call("echo_say", {"text": "a"})), text_reply("done"))
    _done, events, sid = await run_turn(rt, "first")

    assert fake_openai.tool_names(0) == ["echo_say", "echo_shout"]
    assert fake_openai.tool_names(1) == [
        "echo_say",
        "echo_shout",
        *[f"faulty_{a}" for a in ("crash", "refuse", "sleep", "nested")],
    ]
    assert exposer.noted == [("echo", "say", "success")]
    assert len(exposer.rounds) == 2 and "bridged" not in exposer.rounds[0]  # only planner-visible tools offered
    rounds = of(events, "round_started")
    assert [r.tier for r in rounds] == ["recommended", "expanded"] and rounds[0].intents == ["talk"]
    assert rounds[0].hidden == {"bridged": ["bridge-missing"]}
    assert rounds[1].dropped == {"not_a_tool": "expanded, but not available now"}  # wanted, not offered, why
    # the next turn gets the tools used in earlier turns
    fake_openai.push(text_reply("ok"))
    exposer.noted.clear()
    await run_turn(rt, "second", sid)
    assert exposer.started[-1] == ("second", [["echo"]])


async def test_never_more_than_128_functions(fake_openai: FakeOpenAI, make_runtime, tmp_path) -> None:
    import json

    from agent_support import agent_manifest

    data = agent_manifest()
    for i in range(70):
        data["tools"][f"echo{i:02d}"] = dict(data["tools"]["echo"])
    path = tmp_path / "many.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    rt = await make_runtime(tools_json=path)
    fake_openai.push(text_reply("hi"))
    _done, events, _ = await run_turn(rt, "hello")

    sent = fake_openai.tool_names(0)
    # 9 functions of echo/faulty/proc, then 2 per echoNN tool while they fit: whole tools, in order
    assert len(sent) == 127 and len(set(sent)) == 127
    assert "echo58_shout" in sent and "echo59_say" not in sent
    assert of(events, "round_started")[0].functions == sent


async def test_hooks_on_the_runtime_apply_to_every_call(fake_openai: FakeOpenAI, make_runtime) -> None:
    from weclaw_desktop.toolkit.hooks import BeforeOutcome, HookCall

    rt = await make_runtime()
    seen: list[str] = []

    async def guard(call_: HookCall) -> BeforeOutcome | None:
        seen.append(call_.function)
        if call_.arguments.get("text") == "secret":
            return BeforeOutcome.blocked("That text may not be echoed.")
        return BeforeOutcome.rewrite({**call_.arguments, "text": call_.arguments["text"] + "!"})

    async def after(call_: HookCall, result: ToolResult) -> ToolResult | None:
        return ToolResult.ok(result.output + " (checked)")

    rt.hooks.add_before(guard, tools="echo_*", name="guard")
    rt.hooks.add_after(after, tools="echo_say")
    fake_openai.push(
        tool_reply(call("echo_say", {"text": "secret"}, id="x"), call("echo_say", {"text": "hi"}, id="y")),
        text_reply("ok"),
    )
    _done, events, sid = await run_turn(rt, "echo")

    out = {e.call_id: (e.status, e.output) for e in of(events, "tool_call_finished")}
    assert out == {"x": ("denied", "That text may not be echoed."), "y": ("success", "hi! (checked)")}
    assert seen == ["echo_say", "echo_say"]
    assert [(e.call_id, e.decided_by) for e in of(events, "tool_call_denied")] == [("x", "hook")]
    audit = {a.call_id: (a.decided_by, a.hook) for a in await rt.audit.records(session_id=sid)}
    assert audit["x"] == ("hook", "guard")


async def test_turn_in_a_deleted_session_reports_clearly(fake_openai: FakeOpenAI, make_runtime) -> None:
    rt = await make_runtime()
    s = await rt.create_session()
    assert await rt.delete_session(s.id)
    events: list = []
    done = await rt.start_turn(s.id, "hello?", on_event=events.append).wait()
    assert done.reason == "error" and done.message == "This conversation no longer exists. Start a new one."
    assert [e.event_name() for e in events] == ["error_occurred", "turn_done"]
    assert fake_openai.requests == []


async def test_stop_before_the_turn_got_going(fake_openai: FakeOpenAI, make_runtime) -> None:
    rt = await make_runtime()
    s = await rt.create_session()
    handle = rt.start_turn(s.id, "quick")
    handle.cancel()  # before the task ever ran
    done = await handle.wait()
    assert done.reason == "cancelled"
    fake_openai.push(text_reply("still works"))
    assert (await run_turn(rt, "again", s.id))[0].text == "still works"


async def test_terminal_gate_answers() -> None:
    import io

    from weclaw_desktop.agent.terminal import LineReader, TerminalGate
    from weclaw_desktop.toolkit.base import Origin, Risk

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    req = ApprovalRequest("file", "delete", "file_delete", {"path": "a.txt"}, Risk.HIGH, Origin.CLI, "s")
    out = io.StringIO()
    gate = TerminalGate(LineReader(Tty("maybe\ns\no\nd\n")), out=out)
    assert (await gate.request(req)).decision is ApprovalDecision.ALLOW_SESSION  # 'maybe' asked again
    assert (await gate.request(req)).decision is ApprovalDecision.ALLOW_ONCE
    denied = await gate.request(req)
    assert (denied.decision, denied.decided_by) == (ApprovalDecision.DENY, "user")
    assert (await gate.request(req)).decision is ApprovalDecision.DENY  # end of input
    assert "? WeClaw wants to: file → delete" in out.getvalue() and "file_delete · high risk" in out.getvalue()
    assert "path: a.txt" in out.getvalue()
    assert out.getvalue().count("allow [o]nce") == 5

    piped = TerminalGate(LineReader(io.StringIO("o\n")), out=out)
    result = await piped.request(req)
    assert result.decision is ApprovalDecision.DENY and "--yes" in result.note
