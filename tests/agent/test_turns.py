"""Turns against the fake server: what the user sees (events) and what is stored (history, audit)."""

from __future__ import annotations

import json

from agent_support import kinds, make_settings, of, run_turn
from fakeopenai import FakeOpenAI, call, drop_reply, error_reply, text_reply, tool_reply

from weclaw_desktop.toolkit.outcome import DecidedBy, ErrorKind

USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


async def test_plain_text_streams_and_is_stored(fake_openai: FakeOpenAI, make_runtime) -> None:
    rt = await make_runtime()
    fake_openai.push(text_reply("你好", "，世界", usage=USAGE))
    done, events, sid = await run_turn(rt, "打个招呼")

    assert done.reason == "completed" and done.text == "你好，世界" and done.rounds == 1
    assert [e.text for e in of(events, "text_delta")] == ["你好", "，世界"]
    assert kinds(events) == [
        "round_started",
        "text_delta",
        "text_delta",
        "usage_reported",
        "assistant_message",
        "turn_done",
    ]
    assert of(events, "usage_reported")[0].total_tokens == 18
    stored = await rt.load_messages(sid)
    assert [(m.role, m.content) for m in stored] == [("user", "打个招呼"), ("assistant", "你好，世界")]
    assert await rt.history.turn_status(done.run_id) == "completed"
    session = await rt.get_session(sid)
    assert session is not None and session.title == "打个招呼"
    # the request: system prompt first, then the user's message; tools sent
    sent = fake_openai.messages(0)
    assert sent[0]["role"] == "system" and sent[1] == {"role": "user", "content": "打个招呼"}
    assert "echo_say" in fake_openai.tool_names(0)
    assert fake_openai.requests[0]["stream"] is True


async def test_one_tool_call_with_arguments_split_across_chunks(fake_openai: FakeOpenAI, make_runtime) -> None:
    rt = await make_runtime()
    fake_openai.push(
        tool_reply(call("echo_say", {"text": "hello there", "times": 2}, id="call_a", split=7)),
        text_reply("It said it twice."),
    )
    done, events, sid = await run_turn(rt, "echo twice")

    assert done.reason == "completed" and done.text == "It said it twice." and done.rounds == 2
    req = of(events, "tool_call_requested")[0]
    assert (req.call_id, req.function, req.tool, req.action) == ("call_a", "echo_say", "echo", "say")
    assert json.loads(req.arguments) == {"text": "hello there", "times": 2}
    started = of(events, "tool_call_started")[0]
    assert started.arguments == {"text": "hello there", "times": 2}
    finished = of(events, "tool_call_finished")[0]
    assert finished.status == "success" and finished.output.startswith("hello there hello there")
    # the result went back to the model in round 2, right after the assistant's call
    second = fake_openai.messages(1)
    assert second[-2]["tool_calls"][0]["function"]["arguments"] == json.dumps({"text": "hello there", "times": 2})
    assert second[-1] == {"role": "tool", "tool_call_id": "call_a", "content": finished.output}
    calls = await rt.tool_calls(sid)
    assert [(c.call_id, c.function, c.status) for c in calls] == [("call_a", "echo_say", "success")]
    audit = await rt.audit.records(session_id=sid)
    assert [(a.function, a.status, a.decided_by) for a in audit] == [("echo_say", "success", "policy")]


async def test_two_parallel_tool_calls_run_concurrently(fake_openai: FakeOpenAI, make_runtime) -> None:
    rt = await make_runtime()
    fake_openai.push(
        tool_reply(
            call("faulty_sleep", {"seconds": 0.2}, id="c1", split=2),
            call("faulty_sleep", {"seconds": 0.25}, id="c2", split=3),
            interleave=True,
        ),
        text_reply("both slept"),
    )
    done, events, sid = await run_turn(rt, "sleep twice")

    assert done.reason == "completed"
    order = [
        (e.event_name(), e.call_id) for e in events if e.event_name() in ("tool_call_started", "tool_call_finished")
    ]
    # both started before either finished: they ran at the same time
    assert [k for k, _ in order[:2]] == ["tool_call_started", "tool_call_started"]
    assert {c for _, c in order} == {"c1", "c2"}
    tool_msgs = [m for m in fake_openai.messages(1) if m["role"] == "tool"]
    assert sorted(m["tool_call_id"] for m in tool_msgs) == ["c1", "c2"]
    assert all(m["content"] == "slept" for m in tool_msgs)
    assert sorted(c.call_id for c in await rt.tool_calls(sid)) == ["c1", "c2"]


async def test_invalid_json_arguments_go_back_to_the_model(fake_openai: FakeOpenAI, make_runtime) -> None:
    rt = await make_runtime()
    fake_openai.push(
        tool_reply(call("echo_say", '{"text": "unterminated', id="bad")),
        tool_reply(call("echo_say", {"text": "fixed"}, id="good")),
        text_reply("ok"),
    )
    done, events, sid = await run_turn(rt, "echo")

    assert done.reason == "completed" and done.rounds == 3
    first, second = of(events, "tool_call_finished")
    assert first.status == "error" and "not valid JSON" in first.output
    assert second.status == "success" and second.output.startswith("fixed")
    assert "not valid JSON" in fake_openai.messages(1)[-1]["content"]
    stored = await rt.tool_calls(sid)
    assert [(c.call_id, c.status, c.arguments) for c in stored] == [
        ("bad", "error", '{"text": "unterminated'),
        ("good", "success", '{"text": "fixed"}'),
    ]


async def test_schema_violation_lists_the_problems(fake_openai: FakeOpenAI, make_runtime) -> None:
    rt = await make_runtime()
    fake_openai.push(tool_reply(call("echo_say", {"text": "", "times": 9, "colour": "red"})), text_reply("sorry"))
    done, events, _ = await run_turn(rt, "echo")

    out = of(events, "tool_call_finished")[0].output
    assert of(events, "tool_call_finished")[0].status == "error"
    assert "unknown argument 'colour'" in out and "times" in out and "text" in out and "Fix the arguments" in out
    assert not of(events, "tool_call_started")  # never executed
    assert done.reason == "completed"


async def test_unknown_function_lists_what_can_be_called(fake_openai: FakeOpenAI, make_runtime) -> None:
    rt = await make_runtime()
    fake_openai.push(tool_reply(call("weather_get", {"city": "Paris"})), text_reply("I cannot check the weather."))
    done, events, sid = await run_turn(rt, "weather?")

    req = of(events, "tool_call_requested")[0]
    assert (req.function, req.tool) == ("weather_get", "")
    out = of(events, "tool_call_finished")[0].output
    assert "no function named 'weather_get'" in out and "echo_say" in out
    assert "bridged_paste" not in out  # only what was sent this round
    assert (await rt.tool_calls(sid))[0].status == "error"
    assert done.text == "I cannot check the weather."


async def test_a_tool_that_raises_becomes_an_error_result(fake_openai: FakeOpenAI, make_runtime) -> None:
    rt = await make_runtime()
    fake_openai.push(tool_reply(call("faulty_crash", {"text": "x"})), text_reply("it broke"))
    done, events, sid = await run_turn(rt, "crash")

    fin = of(events, "tool_call_finished")[0]
    assert fin.status == "error" and "RuntimeError: boom: x" in fin.output
    audit = (await rt.audit.records(session_id=sid))[0]
    assert audit.status == "error" and "boom" in audit.error_summary
    assert done.reason == "completed"


async def test_429_then_success(fake_openai: FakeOpenAI, make_runtime) -> None:
    rt = await make_runtime()
    fake_openai.push(error_reply(429, "slow down", retry_after=0.01), text_reply("made it"))
    done, events, _ = await run_turn(rt, "hi")

    assert done.reason == "completed" and done.text == "made it"
    assert len(fake_openai.requests) == 2  # the SDK retried after Retry-After
    assert not of(events, "error_occurred")


async def test_500_reports_an_error_and_the_session_stays_usable(fake_openai: FakeOpenAI, make_runtime) -> None:
    settings = make_settings(fake_openai)
    settings.provider.max_retries = 1
    rt = await make_runtime(settings)
    fake_openai.push(error_reply(500, "kaput", retry_after=0.01), error_reply(500, "kaput", retry_after=0.01))
    done, events, sid = await run_turn(rt, "hi")

    err = of(events, "error_occurred")[0]
    assert err.kind == "server" and "500" in err.message and "kaput" in err.message and err.retryable
    assert done.reason == "error" and done.message == err.message
    assert len(fake_openai.requests) == 2
    assert [m.role for m in await rt.load_messages(sid)] == ["user"]
    assert await rt.history.turn_status(done.run_id) == "error"

    fake_openai.push(text_reply("back"))
    done2, _, _ = await run_turn(rt, "again", sid)
    assert done2.text == "back"
    assert [m["role"] for m in fake_openai.messages()[1:]] == ["user", "user"]


async def test_connection_dropped_mid_stream(fake_openai: FakeOpenAI, make_runtime) -> None:
    rt = await make_runtime()
    fake_openai.push(drop_reply("The answer is", " forty"))
    done, events, sid = await run_turn(rt, "question")

    err = of(events, "error_occurred")[0]
    assert err.kind == "connection" and "dropped" in err.message
    assert "".join(e.text for e in of(events, "text_delta")) == "The answer is forty"
    assert done.reason == "error" and done.text == "The answer is forty"
    stored = await rt.load_messages(sid)
    assert [(m.role, m.content, m.status) for m in stored] == [
        ("user", "question", "complete"),
        ("assistant", "The answer is forty", "partial"),
    ]
    fake_openai.push(text_reply("forty-two"))
    done2, _, _ = await run_turn(rt, "go on", sid)
    assert done2.text == "forty-two"
    assert fake_openai.messages()[2] == {"role": "assistant", "content": "The answer is forty"}


async def test_max_rounds_stops_with_a_message(fake_openai: FakeOpenAI, make_runtime) -> None:
    rt = await make_runtime(make_settings(fake_openai, max_rounds=2))
    fake_openai.push(
        tool_reply(call("echo_say", {"text": "one"})),
        tool_reply(call("echo_say", {"text": "two"})),
    )
    done, events, sid = await run_turn(rt, "loop")

    assert done.reason == "max_rounds" and "2 rounds" in done.message
    assert len(fake_openai.requests) == 2 and len(of(events, "round_started")) == 2
    assert len(await rt.tool_calls(sid)) == 2
    assert await rt.history.turn_status(done.run_id) == "max_rounds"


async def test_loop_guard_stops_the_third_identical_call(fake_openai: FakeOpenAI, make_runtime) -> None:
    rt = await make_runtime()
    same = {"text": "again", "times": 1}
    fake_openai.push(
        tool_reply(call("echo_say", same)),
        tool_reply(call("echo_say", {"times": 1, "text": "again"})),  # same call, keys reordered
        tool_reply(call("echo_say", same, id="third")),
    )
    done, events, sid = await run_turn(rt, "repeat")

    assert done.reason == "loop_guard" and "echo_say" in done.message and "3 times" in done.message
    assert len(fake_openai.requests) == 3
    assert len(of(events, "tool_call_started")) == 2  # the third was not run
    third = next(c for c in await rt.tool_calls(sid) if c.call_id == "third")
    assert third.status == "cancelled" and "Not run" in third.output
    fin = of(events, "tool_call_finished")[-1]
    assert (fin.error_kind, fin.decided_by) == (ErrorKind.LOOP_GUARD, DecidedBy.LOOP_GUARD)
    audit = await rt.audit.records(session_id=sid)  # the refused third call has its row, marked as such
    assert [(a.status, a.error_kind) for a in audit] == [
        ("success", None),
        ("success", None),
        ("cancelled", ErrorKind.LOOP_GUARD),
    ]


async def test_large_result_is_capped_keeping_head_and_tail(fake_openai: FakeOpenAI, make_runtime) -> None:
    rt = await make_runtime()
    fake_openai.push(tool_reply(call("proc_big", {"chars": 50_000})), text_reply("big"))
    _done, events, sid = await run_turn(rt, "big")

    fin = of(events, "tool_call_finished")[0]
    assert fin.truncated and len(fin.output) <= 16_000
    assert fin.output.startswith("HEAD") and fin.output.endswith("TAIL") and "truncated" in fin.output
    assert fake_openai.messages(1)[-1]["content"] == fin.output
    stored = (await rt.tool_calls(sid))[0]
    assert stored.truncated and stored.output == fin.output


async def test_turn_budget_shrinks_later_results(fake_openai: FakeOpenAI, make_runtime) -> None:
    rt = await make_runtime(make_settings(fake_openai, turn_result_budget_chars=20_000))
    fake_openai.push(
        tool_reply(call("proc_big", {"chars": 15_000}, id="a"), call("proc_big", {"chars": 15_001}, id="b")),
        tool_reply(call("proc_big", {"chars": 15_002}, id="c")),
        text_reply("done"),
    )
    done, events, _ = await run_turn(rt, "big")

    outputs = {e.call_id: e.output for e in of(events, "tool_call_finished")}
    assert sum(len(o) for o in outputs.values()) < 22_000
    assert "result omitted" in outputs["c"]
    assert done.reason == "completed"


async def test_circuit_breaker_hides_a_failing_tool(fake_openai: FakeOpenAI, make_runtime) -> None:
    rt = await make_runtime()
    fake_openai.push(
        tool_reply(call("faulty_crash", {"text": "1"})),
        tool_reply(call("faulty_crash", {"text": "2"})),
        tool_reply(call("faulty_refuse", {"text": "3"})),
        tool_reply(call("faulty_crash", {"text": "4"})),
        text_reply("giving up"),
    )
    done, events, sid = await run_turn(rt, "crash a lot")

    rounds = of(events, "round_started")
    assert "faulty" in rounds[2].tools and "faulty" not in rounds[3].tools
    assert rounds[3].hidden["faulty"] == ["circuit-open"]
    assert not any(n.startswith("faulty_") for n in fake_openai.tool_names(3))
    last = of(events, "tool_call_finished")[-1]
    assert last.status == "error" and "switched off for the rest of this turn" in last.output
    assert (last.error_kind, last.decided_by) == (ErrorKind.CIRCUIT_OPEN, DecidedBy.CIRCUIT)
    audit = await rt.audit.records(session_id=sid)
    assert len(audit) == 4 and audit[-1].error_kind is ErrorKind.CIRCUIT_OPEN  # the 4th was refused, not run
    assert len(of(events, "tool_call_started")) == 3
    assert done.text == "giving up"
    # a new turn starts with the tool available again
    fake_openai.push(text_reply("fresh"))
    await run_turn(rt, "again", sid)
    assert "faulty_crash" in fake_openai.tool_names()


async def test_concurrent_turn_in_the_same_session_is_refused(fake_openai: FakeOpenAI, make_runtime) -> None:
    import pytest

    from weclaw_desktop.agent.runtime import TurnInProgress

    rt = await make_runtime()
    s = await rt.create_session()
    fake_openai.push(text_reply("slow", delay_s=0.1), text_reply("other"))
    h = rt.start_turn(s.id, "one")
    with pytest.raises(TurnInProgress):
        rt.start_turn(s.id, "two")
    other = await rt.create_session()
    h2 = rt.start_turn(other.id, "three")
    assert (await h.wait()).reason == "completed"
    assert (await h2.wait()).reason == "completed"


async def test_a_storage_failure_ends_the_turn_clearly(fake_openai: FakeOpenAI, make_runtime, monkeypatch) -> None:
    """A full disk while storing the answer: the turn ends with the storage message (kind "storage", not
    "Internal error"), the session stays usable and the next turn is stored normally."""
    from pathlib import Path

    from weclaw_desktop.storage.faults import Fault, StorageError

    rt = await make_runtime()
    original = rt.history.add_assistant

    async def full_disk(*args, **kwargs):
        raise StorageError(Fault.FULL, Path(rt.db.path), "database or disk is full")

    monkeypatch.setattr(rt.history, "add_assistant", full_disk)
    fake_openai.push(text_reply("lost"))
    done, events, sid = await run_turn(rt, "hi")
    assert done.reason == "error" and done.message.startswith(f"The disk holding {rt.db.path} is full")
    assert of(events, "error_occurred")[0].kind == "storage"
    assert await rt.history.turn_status(done.run_id) == "error"

    monkeypatch.setattr(rt.history, "add_assistant", original)
    fake_openai.push(text_reply("saved"))
    done2, _, _ = await run_turn(rt, "again", sid)
    assert done2.text == "saved"
    assert [(m.role, m.content) for m in await rt.load_messages(sid)] == [
        ("user", "hi"),
        ("user", "again"),
        ("assistant", "saved"),
    ]
