"""Stream faults end within the budget, with a message that says what happened, and run nothing that was cut.

What must survive: an endpoint that accepts the request and never answers is reported within the first-token
budget *including retries* (each attempt gets its share); one that sends only SSE keep-alive comments is reported
too (comments are not progress), before the first token and in the middle of an answer; a stream that ends with
neither finish_reason nor [DONE] is incomplete: its tool calls never run (no tool side effect, no call row) and the
user is told how many were dropped; a chunk that is not JSON is bad data from the endpoint, named by its URL (not
"connection dropped"); after each fault the session still works.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from agent_support import of, run_turn
from provider_servers import Call, bad_json_reply, keepalive_reply, silent_reply, truncated_reply, turn_reply

BUDGET = 1.5  # first-token budget for the tests (the default is 60 s; bench/provider_faults.py measures it)


async def test_silent_endpoint_reported_within_the_budget_with_retries(rule_server: Any, runtime_on: Any) -> None:
    server = await rule_server()
    server.push(silent_reply(), silent_reply(), silent_reply(), turn_reply(text=("back",)))
    rt = await runtime_on(server, "custom", first_token_timeout_s=BUDGET, max_retries=2)
    t0 = time.monotonic()
    done, events, sid = await run_turn(rt, "hello?")
    elapsed = time.monotonic() - t0
    assert done.reason == "error" and elapsed < BUDGET + 1.0, elapsed
    assert len(server.requests) == 3  # three tries, all inside the one budget
    error = of(events, "error_occurred")[0]
    assert error.kind == "timeout" and server.base_url in error.message
    assert f"did not answer within {BUDGET:g} s, 3 tries" in error.message
    done2, _, _ = await run_turn(rt, "again", sid)
    assert done2.reason == "completed" and done2.text == "back"


async def test_keepalive_only_before_the_first_token(rule_server: Any, runtime_on: Any) -> None:
    server = await rule_server()
    server.push(keepalive_reply(), keepalive_reply())
    rt = await runtime_on(server, "custom", first_token_timeout_s=BUDGET, max_retries=1)
    t0 = time.monotonic()
    done, events, _ = await run_turn(rt, "hi")
    assert done.reason == "error" and time.monotonic() - t0 < BUDGET + 1.0
    error = of(events, "error_occurred")[0]
    assert error.kind == "timeout" and "sent only keep-alive messages and no answer" in error.message


async def test_keepalive_does_not_reset_the_idle_timeout(rule_server: Any, runtime_on: Any) -> None:
    """Part of an answer, then only keep-alives: reported after idle_s, the part kept as a partial answer."""
    server = await rule_server()
    server.push(keepalive_reply(after=2, text="Half an answer"))
    rt = await runtime_on(server, "custom", idle_timeout_s=0.8)
    t0 = time.monotonic()
    done, events, sid = await run_turn(rt, "hi")
    assert done.reason == "error" and time.monotonic() - t0 < 3.0
    error = of(events, "error_occurred")[0]
    assert error.kind == "timeout" and "nothing for 0.8 s (only keep-alive messages)" in error.message
    stored = [m for m in await rt.load_messages(sid) if m.role == "assistant"]
    assert [(m.content, m.status) for m in stored] == [("Half an answer", "partial")]


async def test_incomplete_stream_runs_none_of_its_tool_calls(
    rule_server: Any, runtime_on: Any, weclaw_home: Path
) -> None:
    server = await rule_server()
    cut = truncated_reply(
        turn_reply(
            reasoning=("I will write the environment. ",), calls=(Call("proc_env"), Call("echo_say", {"text": "x"}))
        )
    )
    server.push(cut, turn_reply(text=("ok",)))
    rt = await runtime_on(server, "custom")
    done, events, sid = await run_turn(rt, "dump env")
    assert done.reason == "error" and len(server.requests) == 1  # not retried, not continued
    error = of(events, "error_occurred")[0]
    assert error.kind == "incomplete" and "Its 2 tool call(s) were not run" in error.message
    assert of(events, "tool_call_requested") == [] and of(events, "tool_call_started") == []
    assert not await asyncio.to_thread(lambda: list(weclaw_home.rglob("child-env.json")))  # proc_env never ran
    assert await rt.tool_calls(sid) == []
    stored = [m for m in await rt.load_messages(sid) if m.role == "assistant"]
    assert [(m.tool_calls, m.status, m.reasoning) for m in stored] == [
        ([], "partial", "I will write the environment. ")
    ]
    done2, _, _ = await run_turn(rt, "just say ok", sid)
    assert done2.reason == "completed"


async def test_stream_with_finish_reason_but_no_done_is_complete(rule_server: Any, runtime_on: Any) -> None:
    """Servers that never send [DONE] but do send finish_reason are fine (Gemini-style)."""
    server = await rule_server()
    reply = turn_reply(text=("fine",))
    reply.headers = {"x-done": "0"}
    server.push(reply)
    rt = await runtime_on(server, "custom")
    done, _, _ = await run_turn(rt, "hi")
    assert done.reason == "completed" and done.text == "fine"


async def test_malformed_chunk_is_bad_data_naming_the_endpoint(rule_server: Any, runtime_on: Any) -> None:
    server = await rule_server()
    server.push(bad_json_reply("Before the bad chunk."))
    rt = await runtime_on(server, "custom")
    done, events, sid = await run_turn(rt, "hi")
    error = of(events, "error_occurred")[0]
    assert done.reason == "error" and error.kind == "bad_data" and server.base_url in error.message
    assert "not a valid stream chunk" in error.message and "dropped" not in error.message
    stored = [m for m in await rt.load_messages(sid) if m.role == "assistant"]
    assert stored[0].content == "Before the bad chunk." and stored[0].status == "partial"


async def test_mid_stream_error_event_is_reported(rule_server: Any, runtime_on: Any) -> None:
    server = await rule_server()
    reply = turn_reply(text=("partial",))
    reply.chunks.insert(2, {"error": {"message": "upstream overloaded", "code": 529}})
    server.push(reply)
    rt = await runtime_on(server, "custom")
    done, events, _ = await run_turn(rt, "hi")
    error = of(events, "error_occurred")[0]
    assert done.reason == "error" and error.kind == "server" and "upstream overloaded" in error.message
