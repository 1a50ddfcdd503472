"""A multi-round turn with parallel tool calls completes on every profile, through the real AgentRuntime, against a
server that enforces that provider's documented rule (tests/providers/provider_servers.py).

What must survive, per profile: the turn completes (3 rounds: two parallel calls, one call, the answer); the
thinking is shown as reasoning events and never inside the answer; it is stored with each assistant message; every
later request carries exactly what the provider requires back (and nothing a strict endpoint refuses); a second
user turn in the same session is still accepted. The negative controls show each server really enforces its rule:
a client that does not send the reasoning (or signature) back gets the real service's error, shown to the user.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from agent_support import of, run_turn
from provider_servers import (
    DEEPSEEK_MISSING,
    Call,
    RuleServer,
    deepseek_rule,
    gemini_rule,
    kimi_rule,
    openrouter_rule,
    strict_openai_rule,
    turn_reply,
)

R1, R2, R3, R4 = "First I list what to echo. ", "Two done, one left. ", "All three echoed; answer. ", "Plain. "


@dataclass
class Case:
    preset: str
    rule: Any
    shape: str  # how the server streams reasoning
    field: str  # where the profile must send it back ('' = never)
    shown: bool = True  # reasoning reaches the user
    signatures: bool = False
    details: bool = False

    @property
    def id(self) -> str:
        return self.preset


CASES = [
    Case("deepseek", deepseek_rule, "reasoning_content", "reasoning_content"),
    Case("moonshot", kimi_rule, "reasoning_content", "reasoning_content"),
    Case("zhipu", None, "reasoning_content", "reasoning_content"),
    Case("qwen", strict_openai_rule, "reasoning_content", ""),
    Case("openrouter", openrouter_rule, "reasoning", "reasoning", details=True),
    Case("gemini", gemini_rule, "reasoning_content", "", signatures=True),
    Case("ollama", None, "reasoning", "reasoning"),
    Case("lmstudio", strict_openai_rule, "think", ""),
    Case("custom", deepseek_rule, "reasoning_content", "reasoning_content"),  # a vLLM-served DeepSeek, say
    Case("custom", None, "reasoning", "reasoning"),  # vLLM >= 0.11 with its `reasoning` field
    Case("openai", strict_openai_rule, "none", "", shown=False),
]


def _script(server: RuleServer, case: Case) -> None:
    def reply(reasoning: str, calls: tuple[Call, ...] = (), text: tuple[str, ...] = ()) -> Any:
        pieces = () if case.shape == "none" else (reasoning[:9], reasoning[9:])
        details = (
            [{"type": "reasoning.text", "text": reasoning, "index": 0, "signature": "sig-or"}] if case.details else None
        )
        return turn_reply(
            reasoning=pieces,
            calls=calls,
            text=text,
            shape="reasoning_content" if case.shape == "none" else case.shape,
            details=details,
        )

    sig = (lambda n: f"gemini-sig-{n}==") if case.signatures else (lambda n: "")
    server.push(
        reply(
            R1, (Call("echo_say", {"text": "a"}, signature=sig(1)), Call("echo_say", {"text": "b"}, signature=sig(2)))
        ),
        reply(R2, (Call("echo_say", {"text": "c"}, signature=sig(3)),)),
        reply(R3, text=("Done: ", "a b c")),
        reply(R4, text=("Again.",)),
    )


def _assistant_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "assistant"]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.preset}-{c.shape}" for c in CASES])
async def test_multi_round_parallel_tool_turn_completes(case: Case, rule_server: Any, runtime_on: Any) -> None:
    server = await rule_server(case.rule)
    _script(server, case)
    rt = await runtime_on(server, case.preset)
    done, events, sid = await run_turn(rt, "echo a, b and c")

    assert server.rejections == [], server.rejections
    assert done.reason == "completed" and done.rounds == 3, done.message
    finished = of(events, "tool_call_finished")
    assert [e.status for e in finished] == ["success"] * 3
    answer = "".join(e.text for e in of(events, "text_delta"))
    assert answer == "Done: a b c" and "<think>" not in answer and "First I list" not in answer
    shown = "".join(e.text for e in of(events, "reasoning_delta"))
    assert shown == (R1 + R2 + R3 if case.shown else "")

    stored = [m for m in await rt.load_messages(sid) if m.role == "assistant"]
    assert [m.reasoning for m in stored] == ([R1, R2, R3] if case.shown else ["", "", ""])
    assert stored[-1].content == "Done: a b c"

    # what went back: round 2 and round 3 requests carry the reasoning of the tool-call turns (or nothing)
    for request, expected in ((1, [R1]), (2, [R1, R2])):
        sent = _assistant_messages(server.requests[request])
        assert len(sent) == len(expected)
        for msg, reasoning in zip(sent, expected, strict=True):
            assert "<think>" not in str(msg.get("content") or "")
            if case.field:
                assert msg[case.field] == reasoning
            else:
                assert not {"reasoning_content", "reasoning"} & set(msg), msg
            if case.details:
                assert msg["reasoning_details"] == [
                    {"type": "reasoning.text", "text": reasoning, "index": 0, "signature": "sig-or"}
                ]
            if case.signatures:
                sigs = [c["extra_content"]["google"]["thought_signature"] for c in msg["tool_calls"]]
                assert all(s.startswith("gemini-sig-") for s in sigs)
            assert "_meta" not in msg

    # a second, plain question in the same session: the earlier tool turn still goes back whole
    done2, _, _ = await run_turn(rt, "and again?", sid)
    assert server.rejections == [] and done2.reason == "completed", done2.message
    last = _assistant_messages(server.requests[-1])
    assert len(last) == 3
    if case.field:  # every assistant message of the tool-using stretch, including its final answer
        assert [m[case.field] for m in last] == [R1, R2, R3]


async def test_deepseek_rule_bites_a_client_that_drops_reasoning(rule_server: Any, runtime_on: Any) -> None:
    """Negative control: the same conversation under a profile that never sends reasoning back (OpenAI's) gets
    DeepSeek's own 400 after the first tool call, and the user sees DeepSeek's message."""
    server = await rule_server(deepseek_rule)
    server.push(turn_reply(reasoning=(R1,), calls=(Call("echo_say", {"text": "a"}),)), turn_reply(text=("x",)))
    rt = await runtime_on(server, "openai")
    done, events, _ = await run_turn(rt, "echo a")
    assert done.reason == "error" and len(server.rejections) == 1
    assert server.rejections[0].status == 400
    assert server.rejections[0].body["error"]["message"] == DEEPSEEK_MISSING
    errors = of(events, "error_occurred")
    assert errors and DEEPSEEK_MISSING in errors[0].message and "(400)" in errors[0].message


async def test_kimi_rule_bites_and_names_the_message(rule_server: Any, runtime_on: Any) -> None:
    server = await rule_server(kimi_rule)
    server.push(turn_reply(reasoning=(R1,), calls=(Call("echo_say", {"text": "a"}),)), turn_reply(text=("x",)))
    rt = await runtime_on(server, "qwen")  # Qwen's profile sends nothing back
    done, events, _ = await run_turn(rt, "echo a")
    assert done.reason == "error"
    assert (
        "reasoning_content is missing in assistant tool call message at index 2"
        in of(events, "error_occurred")[0].message
    )


async def test_gemini_rule_bites_without_the_signature(rule_server: Any, runtime_on: Any) -> None:
    """Gemini answers with a *list* of errors; the message still reaches the user."""
    server = await rule_server(gemini_rule)
    server.push(turn_reply(calls=(Call("echo_say", {"text": "a"}, signature="sig-A"),)), turn_reply(text=("x",)))
    rt = await runtime_on(server, "openai")  # strict profile: opaque fields are not returned
    done, events, _ = await run_turn(rt, "echo a")
    assert done.reason == "error"
    assert "missing a thought_signature" in of(events, "error_occurred")[0].message


async def test_signature_goes_back_only_to_the_endpoint_that_made_it(rule_server: Any, runtime_on: Any) -> None:
    """A chat begun on Gemini and continued on a strict endpoint: the strict one never sees the signature."""
    gemini = await rule_server(gemini_rule)
    gemini.push(turn_reply(calls=(Call("echo_say", {"text": "a"}, signature="sig-A"),)), turn_reply(text=("ok",)))
    rt = await runtime_on(gemini, "gemini")
    done, _, sid = await run_turn(rt, "echo a")
    assert done.reason == "completed"
    strict = await rule_server(strict_openai_rule)
    strict.push(turn_reply(text=("fine",)))
    rt2 = await runtime_on(strict, "openai")
    done2, _, _ = await run_turn(rt2, "next", sid)
    assert strict.rejections == [] and done2.reason == "completed", done2.message
    assert "extra_content" not in str(strict.requests[-1]["messages"])


async def test_deepseek_accepts_a_history_written_by_another_model(rule_server: Any, runtime_on: Any) -> None:
    """Tool-call turns stored without reasoning (a non-thinking model wrote them) get an empty reasoning_content,
    so switching to DeepSeek mid-chat does not end in its 400."""
    plain = await rule_server(None)
    plain.push(turn_reply(calls=(Call("echo_say", {"text": "a"}),)), turn_reply(text=("ok",)))
    rt = await runtime_on(plain, "openai")
    assert (await run_turn(rt, "echo a"))[0].reason == "completed"
    sid = (await rt.list_sessions())[0].id
    deepseek = await rule_server(deepseek_rule)
    deepseek.push(turn_reply(reasoning=(R4,), text=("sure",)))
    rt2 = await runtime_on(deepseek, "deepseek")
    done, _, _ = await run_turn(rt2, "continue", sid)
    assert deepseek.rejections == [] and done.reason == "completed", done.message
    tool_msg = _assistant_messages(deepseek.requests[-1])[0]
    assert tool_msg["reasoning_content"] == ""
