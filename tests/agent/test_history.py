"""History store, chat_history tool, sessions API, prompt, guards, logs and secrets."""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path

import pytest
from agent_support import TEST_KEY, make_settings, of, run_turn
from fakeopenai import FakeOpenAI, call, text_reply, tool_reply
from toolrun import direct

from weclaw_desktop.agent.guards import CircuitBreaker, LoopGuard, ResultBudget, cap_text
from weclaw_desktop.agent.history import INTERRUPTED_RESULT, StoredMessage, build_model_messages
from weclaw_desktop.agent.prompt import system_prompt, user_language
from weclaw_desktop.agent.runtime import AgentRuntime
from weclaw_desktop.settings import SettingsStore
from weclaw_desktop.toolkit.base import Origin, ToolResult, ToolStatus
from weclaw_desktop.toolkit.outcome import ErrorKind


async def test_sessions_api_and_resume_in_a_new_runtime(fake_openai: FakeOpenAI, make_runtime, tools_json) -> None:
    rt = await make_runtime()
    fake_openai.push(text_reply("发票已经整理好了"))
    _, _, sid = await run_turn(rt, "帮我整理一下发票")
    other = await rt.create_session("Groceries")
    assert [s.id for s in await rt.list_sessions()][:2] == [other.id, sid]
    assert await rt.rename_session(sid, "  Invoices   2026 ")
    assert (await rt.get_session(sid)).title == "Invoices 2026"
    await rt.close()

    rt2 = AgentRuntime.create(make_settings(fake_openai), tools_json=tools_json, api_key=TEST_KEY, origin=Origin.CLI)
    try:
        info = await rt2.get_session(sid)
        assert info is not None and info.title == "Invoices 2026" and info.message_count == 2
        hits = await rt2.search("发票")
        assert [(h.session_id, h.role) for h in hits] == [(sid, "assistant"), (sid, "user")]
        assert "发票" in hits[0].snippet
        assert await rt2.search("整理 发票") and not await rt2.search("发票 banana")
        assert await rt2.search("50%_off") == []  # LIKE wildcards are literal
        fake_openai.push(text_reply("好的"))
        await run_turn(rt2, "谢谢", sid)
        assert [m["content"] for m in fake_openai.messages()[1:]] == ["帮我整理一下发票", "发票已经整理好了", "谢谢"]
        assert await rt2.delete_session(sid)
        assert await rt2.get_session(sid) is None and await rt2.load_messages(sid) == []
        assert not await rt2.delete_session(sid)
    finally:
        await rt2.close()


def test_model_messages_repair_what_a_crash_leaves() -> None:
    call_a = {"id": "a", "type": "function", "function": {"name": "x", "arguments": "{}"}}
    call_b = {"id": "b", "type": "function", "function": {"name": "y", "arguments": "{}"}}
    rows = [
        StoredMessage(1, "user", "hi"),
        StoredMessage(2, "assistant", "", tool_calls=[call_a, call_b]),
        StoredMessage(3, "tool", "A done", tool_call_id="a"),
        StoredMessage(4, "tool", "stray", tool_call_id="zzz"),
        StoredMessage(5, "assistant", "", status="cancelled"),
        StoredMessage(6, "user", "again"),
    ]
    out = build_model_messages(rows)
    assert out == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call_a, call_b]},
        {"role": "tool", "tool_call_id": "a", "content": "A done"},
        {"role": "tool", "tool_call_id": "b", "content": INTERRUPTED_RESULT},
        {"role": "user", "content": "again"},
    ]


def test_model_messages_are_trimmed_from_the_oldest_user_turn() -> None:
    rows = [StoredMessage(i, "user" if i % 2 else "assistant", "x" * 100) for i in range(1, 11)]
    out = build_model_messages(rows, max_chars=450)
    assert len(out) == 4 and out[0]["role"] == "user"


def _history_manifest(tmp_path: Path) -> Path:
    import json

    from agent_support import agent_manifest

    data = agent_manifest()
    data["tools"]["chat_history"] = {
        "module": "weclaw_desktop.tools.chat_history",
        "class": "ChatHistoryTool",
        "actions": ["search", "list_sessions"],
        "description": {"en": "history"},
        "display": {"name": {"en": "History"}},
        "bridges": ["history"],
    }
    path = tmp_path / "with-history.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


async def test_chat_history_tool_through_the_bridge(fake_openai: FakeOpenAI, make_runtime, tmp_path: Path) -> None:
    rt = await make_runtime(tools_json=_history_manifest(tmp_path))
    fake_openai.push(text_reply("记住了：周五交报告"))
    await run_turn(rt, "提醒我周五交季度报告")
    fake_openai.push(
        tool_reply(
            call("chat_history_search", {"query": "季度报告"}, id="s"),
            call("chat_history_list_sessions", {}, id="l"),
            call("chat_history_search", {"query": "   "}, id="bad"),
        ),
        text_reply("找到了"),
    )
    _done, events, _sid = await run_turn(rt, "上次我说要交什么？")

    out = {e.call_id: e for e in of(events, "tool_call_finished")}
    assert out["s"].status == "success" and "1 message(s) containing '季度报告'" in out["s"].output
    assert "提醒我周五交季度报告" in out["s"].output
    assert out["l"].status == "success" and "2 conversation(s)" in out["l"].output and "(this one)" in out["l"].output
    assert out["bad"].status == "error" and "query is empty" in out["bad"].output
    assert "chat_history_search" in fake_openai.tool_names()


def test_cap_text_keeps_head_and_tail() -> None:
    text = "H" * 10_000 + "T" * 10_000
    capped, truncated = cap_text(text, 16_000)
    assert truncated and len(capped) <= 16_000 and capped.startswith("HHH") and capped.endswith("TTT")
    assert "4,000 of 20,000 characters omitted" in capped
    assert cap_text("short", 16_000) == ("short", False)
    budget = ResultBudget(per_result=1_000, per_turn=1_500)
    assert budget.take("a" * 900) == ("a" * 900, False)
    second, cut = budget.take("b" * 900)
    assert cut and len(second) <= 600
    assert "result omitted" in budget.take("c")[0]


def test_loop_guard_and_breaker() -> None:
    guard = LoopGuard(3)
    assert not guard.trips("f", '{"a": 1, "b": 2}')
    assert not guard.trips("f", '{"b": 2, "a": 1}')
    assert not guard.trips("f", '{"a": 2}')
    assert guard.trips("f", '{ "a":1,"b":2 }')
    breaker = CircuitBreaker(2)
    fail, ok = ToolResult.fail("x"), ToolResult.ok("y")
    assert not breaker.record("t", fail) and not breaker.record("t", ok) and not breaker.record("t", fail)
    assert breaker.record("t", ToolResult.fail("x", status=ToolStatus.TIMEOUT)) and breaker.open == {"t"}
    assert not breaker.record("u", ToolResult.fail("no", status=ToolStatus.DENIED))


def test_system_prompt() -> None:
    now = datetime(2026, 11, 30, 9, 15).astimezone()
    text = system_prompt(language="zh", outputs_dir=Path("/data/out"), now=now, os_name="Linux 6.1")
    assert "2026-11-30" in text and "Monday" in text and "Linux 6.1" in text and "/data/out" in text
    assert "Chinese" in text and "tool" in text
    assert "/home/" not in text and "C:\\" not in text
    assert user_language("system", "帮我看看") == "zh" and user_language("system", "hello") == "en"
    assert user_language("zh", "hello") == "zh"


def test_logs_are_redacted_and_rotate(weclaw_home: Path) -> None:
    from weclaw_desktop.agent.logs import setup_logging
    from weclaw_desktop.toolkit.redact import register_secret

    register_secret("hunter2-secret-value")
    path = setup_logging(weclaw_home / "logs", max_bytes=2_000, backups=2)
    log = logging.getLogger("weclaw.test")
    log.info("calling with key %s and Authorization: Bearer abcdefghijklmnop", "hunter2-secret-value")
    try:
        raise ValueError("token=supersecret123 failed")
    except ValueError:
        log.exception("boom")
    for i in range(100):
        log.info("filler line %d %s", i, "x" * 50)
    text = "".join(p.read_text(encoding="utf-8") for p in path.parent.glob("weclaw.log*"))
    assert "hunter2-secret-value" not in text and "abcdefghijklmnop" not in text and "supersecret123" not in text
    assert len(list(path.parent.glob("weclaw.log*"))) == 3


async def test_keyring_key_and_no_keyring_fallback(
    fake_openai: FakeOpenAI, tools_json, memory_keyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    from weclaw_desktop.secrets import SecretStore

    store = SecretStore()
    assert store.set("api_key", TEST_KEY) is True
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-fallback-999999")
    rt = AgentRuntime.create(make_settings(fake_openai), tools_json=tools_json, secrets=store)
    try:
        assert rt.api_key() == TEST_KEY  # keyring first
        assert "OPENAI_API_KEY" not in __import__("os").environ  # taken out of the environment
        fake_openai.push(text_reply("ok"))
        await run_turn(rt, "hi")
        assert fake_openai.headers[0]["Authorization"] == f"Bearer {TEST_KEY}"
        store.delete("api_key")
        assert rt.api_key() == "sk-env-fallback-999999"
        again = AgentRuntime.create(make_settings(fake_openai), tools_json=tools_json, secrets=store)
        assert again.api_key() == "sk-env-fallback-999999"  # a second runtime still knows the env key
        await again.close()
    finally:
        await rt.close()


async def test_without_a_keyring_the_env_key_works(
    fake_openai: FakeOpenAI, tools_json, no_keyring, monkeypatch
) -> None:
    from weclaw_desktop.secrets import SecretStore

    monkeypatch.setenv("WECLAW_API_KEY", TEST_KEY)
    store = SecretStore()
    rt = AgentRuntime.create(make_settings(fake_openai), tools_json=tools_json, secrets=store)
    try:
        assert rt.api_key() == TEST_KEY and store.persistent is False
        assert store.set("api_key", "sk-session-only-1234") is False  # kept for this run only
        assert rt.api_key() == "sk-session-only-1234"
        fake_openai.push(text_reply("fine"))
        done, _, _ = await run_turn(rt, "hi")
        assert done.text == "fine"
    finally:
        await rt.close()


async def test_settings_round_trip_and_apply(fake_openai: FakeOpenAI, make_runtime, weclaw_home: Path) -> None:
    settings = make_settings(fake_openai, max_rounds=4)
    SettingsStore.open().save(settings)
    loaded = SettingsStore.open().settings
    assert loaded.agent.max_rounds == 4 and loaded.provider.base_url == fake_openai.base_url
    rt = await make_runtime(loaded)
    loaded.provider.model = "fake-model-2"
    loaded.tools.policy.disabled = ["faulty"]
    rt.apply_settings(loaded)
    fake_openai.push(text_reply("x"))
    await run_turn(rt, "hi")
    assert fake_openai.requests[-1]["model"] == "fake-model-2"
    assert not any(n.startswith("faulty_") for n in fake_openai.tool_names())


async def test_settings_dialog_helpers(fake_openai: FakeOpenAI, tools_json, memory_keyring) -> None:
    rt = AgentRuntime.create(make_settings(fake_openai), tools_json=tools_json)
    try:
        assert rt.api_key() is None
        assert rt.set_api_key(TEST_KEY) is True and rt.api_key() == TEST_KEY
        assert await rt.list_models() == ["fake-model", "fake-model-2"]
        assert await rt.check_endpoint() == "2 models available"
        assert fake_openai.models_headers[-1]["Authorization"] == f"Bearer {TEST_KEY}"
        fake_openai.push(text_reply("keyed"))
        assert (await run_turn(rt, "hi"))[0].text == "keyed"
    finally:
        await rt.close()


@pytest.mark.parametrize(
    ("function", "arguments", "expected"),
    [
        ("chat_history_search", '{"query": "x", "limit": 0}', "limit"),
        ("chat_history_search", '{"query": "' + "q" * 201 + '"}', "query"),
        ("chat_history_search", "{}", "query"),
        ("chat_history_list_sessions", '{"limit": 1000}', "limit"),
        ("chat_history_list_sessions", '{"session": "x"}', "unknown argument 'session'"),
    ],
)
async def test_chat_history_bad_input(
    fake_openai: FakeOpenAI, make_runtime, tmp_path: Path, function: str, arguments: str, expected: str
) -> None:
    from weclaw_desktop.toolkit.dispatcher import ToolCall

    rt = await make_runtime(tools_json=_history_manifest(tmp_path))
    out = await direct(rt.dispatcher, ToolCall("c", function, arguments))
    result = out.result
    assert out.error is ErrorKind.INVALID_ARGUMENTS
    assert result.status is ToolStatus.ERROR and expected in result.output and "Fix the arguments" in result.output


async def test_chat_history_without_the_bridge_is_hidden_with_a_reason(make_runtime, tmp_path: Path) -> None:
    from weclaw_desktop.toolkit.dispatcher import ToolCall

    rt = await make_runtime(tools_json=_history_manifest(tmp_path))
    rt.registry.inject({"history": None})
    hidden = rt.dispatcher.exposure.compute().hidden["chat_history"]
    assert [d.code.value for d in hidden] == ["bridge-missing"]
    out = await direct(rt.dispatcher, ToolCall("c", "chat_history_list_sessions", "{}"))
    result = out.result
    assert result.status is ToolStatus.ERROR and "not available right now" in result.output
    assert out.error is ErrorKind.UNAVAILABLE
