"""Conversation features through the real runtime, loop and SQLite history against the fake OpenAI server:
saved provider configurations and a per-chat model, assistants (prompt, tool profile enforced at the round
boundary, generation settings, custom instructions), branches (edit, regenerate, retry, delete: only the active
branch is sent and shown), usage (estimated when the endpoint sends none) and titles.

What must survive: the model is sent exactly what the chat's setup says; a tool outside the assistant's profile
is never offered and never runs even when the model calls it; earlier versions of a message are kept, yet the
model never sees them; a reopened chat shows the branch the user was on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_support import TEST_KEY, agent_manifest, make_settings, of
from fakeopenai import FakeOpenAI, call, error_reply, text_reply, tool_reply
from helpers import tool_entry

from weclaw_desktop.agent.runtime import AgentRuntime
from weclaw_desktop.settings import ProviderSettings
from weclaw_desktop.settings.conversation import AssistantSettings, GenerationSettings
from weclaw_desktop.toolkit.base import Origin


def manifest_with_pictures(folder: Path) -> Path:
    doc = agent_manifest()
    pic = tool_entry("PicTool", ["take"])
    pic["module"] = "weclaw_agent_test_tools"
    doc["tools"]["pic"] = pic
    path = folder / "tools-pic.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


async def turn(rt: AgentRuntime, sid: str, text: str, **kwargs: Any) -> tuple[Any, list[Any]]:
    events: list[Any] = []
    handle = rt.start_turn(sid, text, on_event=events.append, **kwargs)
    return await handle.wait(), events


def texts(messages: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(m["role"], m.get("content")) for m in messages if m["role"] != "system"]


# --- providers and models --------------------------------------------------------------------------
async def test_switching_the_model_mid_chat_sends_the_new_model_and_the_chat_remembers_it(
    fake_openai: FakeOpenAI, make_runtime: Any, tools_json: Path
) -> None:
    settings = make_settings(fake_openai)
    settings.provider.models = ["fake-model", "fake-model-2"]
    rt = await make_runtime(settings)
    sid = (await rt.create_session()).id
    fake_openai.push(text_reply("one"), text_reply("two"))
    await turn(rt, sid, "first")
    await rt.set_chat_model(sid, settings.provider.name, "fake-model-2")
    done, _ = await turn(rt, sid, "second")
    assert done.reason == "completed"
    assert [r["model"] for r in fake_openai.requests] == ["fake-model", "fake-model-2"]
    assert texts(fake_openai.messages(-1)) == [("user", "first"), ("assistant", "one"), ("user", "second")]
    # a new runtime (a restart) reads the chat's model from the history
    rt2 = AgentRuntime.create(settings, tools_json=tools_json, api_key=TEST_KEY, origin=Origin.CLI, logs=False)
    try:
        _entry, model, _assistant = await rt2.who_answers(sid)
        assert model == "fake-model-2"
        assert (await rt2.chat_setup(sid)).model == "fake-model-2"
    finally:
        await rt2.close()


async def test_each_saved_configuration_uses_its_own_endpoint_and_keyring_entry(
    fake_openai: FakeOpenAI, make_runtime: Any, memory_keyring: Any
) -> None:
    async with FakeOpenAI(model="other-model") as other:
        settings = make_settings(fake_openai)
        settings.provider.api_key_name = "api_key"
        settings.providers.entries = [
            settings.provider,
            ProviderSettings(name="Local", base_url=other.base_url, model="other-model", api_key_name="api_key.local"),
        ]
        rt = await make_runtime(settings, api_key=None)
        rt.secrets.set("api_key", "sk-first-config")
        rt.secrets.set("api_key.local", "sk-second-config")
        sid = (await rt.create_session()).id
        await rt.set_chat_model(sid, "Local", "other-model")
        other.push(text_reply("from the second endpoint"))
        done, _ = await turn(rt, sid, "hello")
        assert done.text == "from the second endpoint" and fake_openai.requests == []
        assert other.requests[0]["model"] == "other-model"
        assert other.headers[0]["Authorization"] == "Bearer sk-second-config"
        fresh = (await rt.create_session()).id  # a new chat uses the active configuration
        fake_openai.push(text_reply("from the first"))
        await turn(rt, fresh, "hi")
        assert fake_openai.headers[0]["Authorization"] == "Bearer sk-first-config"


async def test_a_chat_whose_configuration_was_deleted_falls_back_to_the_active_one(
    fake_openai: FakeOpenAI, make_runtime: Any
) -> None:
    settings = make_settings(fake_openai)
    rt = await make_runtime(settings)
    sid = (await rt.create_session()).id
    await rt.history.chats.update(sid, provider="Gone", model="gone-model")
    fake_openai.push(text_reply("ok"))
    done, _ = await turn(rt, sid, "hi")
    assert done.reason == "completed" and fake_openai.requests[0]["model"] == "fake-model"


# --- assistants -----------------------------------------------------------------------------------
def with_assistant(settings: Any, **fields: Any) -> Any:
    settings.assistants.entries = [
        *settings.assistants.entries,
        AssistantSettings(id="writer", name="Writer", icon="✍️", **fields),
    ]
    return settings


async def test_the_assistants_prompt_tools_and_generation_settings_reach_the_request(
    fake_openai: FakeOpenAI, make_runtime: Any
) -> None:
    settings = with_assistant(
        make_settings(fake_openai),
        system_prompt="Write like a poet.",
        tools=["echo"],
        generation=GenerationSettings(temperature=0.2, max_tokens=300),
    )
    rt = await make_runtime(settings)
    sid = (await rt.create_session(assistant="writer")).id
    await rt.set_instructions(sid, "Always answer in French.")
    fake_openai.push(text_reply("Bonjour"))
    await turn(rt, sid, "hello")
    body = fake_openai.requests[0]
    system = body["messages"][0]["content"]
    assert "Write like a poet." in system and "Always answer in French." in system and 'assistant "Writer"' in system
    assert body["temperature"] == 0.2 and body["max_tokens"] == 300 and "top_p" not in body
    assert sorted(fake_openai.tool_names(0)) == ["echo_say", "echo_shout"]


async def test_a_tool_outside_the_assistants_profile_is_refused_and_never_runs(
    fake_openai: FakeOpenAI, make_runtime: Any, tmp_path: Path
) -> None:
    """The profile is a boundary, not a hidden button: a model that calls proc_env anyway gets a refusal."""
    settings = with_assistant(make_settings(fake_openai), tools=["echo"])
    rt = await make_runtime(settings)
    sid = (await rt.create_session(assistant="writer")).id
    fake_openai.push(tool_reply(call("proc_env", {}), call("echo_say", {"text": "hi"})), text_reply("done"))
    done, events = await turn(rt, sid, "show me your environment")
    assert done.reason == "completed"
    assert "proc_env" not in fake_openai.tool_names(0)
    finished = {e.function: e for e in of(events, "tool_call_finished")}
    assert finished["echo_say"].status == "success"
    refused = finished["proc_env"]
    assert refused.status == "denied" and refused.error_kind == "disabled"
    assert "not among the tools of the assistant 'Writer'" in refused.output
    assert not of(events, "tool_call_started")[1:]  # only echo_say started
    assert not (rt.loop.tool_env.outputs_dir / "child-env.json").exists()  # proc_env writes this when it runs
    audit = await rt.audit.records()
    assert [(a.function, a.error_kind) for a in audit if a.function == "proc_env"] == [("proc_env", "disabled")]


async def test_an_assistant_without_tools_offers_none(fake_openai: FakeOpenAI, make_runtime: Any) -> None:
    rt = await make_runtime(with_assistant(make_settings(fake_openai), tools=[]))
    sid = (await rt.create_session(assistant="writer")).id
    fake_openai.push(text_reply("just words"))
    await turn(rt, sid, "hi")
    assert fake_openai.tool_names(0) == []


async def test_a_new_chat_starts_from_the_default_assistant_and_its_model(
    fake_openai: FakeOpenAI, make_runtime: Any
) -> None:
    settings = with_assistant(make_settings(fake_openai), model="fake-model-2", system_prompt="Be brief.")
    settings.assistants.default = "writer"
    rt = await make_runtime(settings)
    sid = (await rt.create_session()).id
    setup = await rt.chat_setup(sid)
    assert (setup.assistant, setup.model) == ("writer", "fake-model-2")
    fake_openai.push(text_reply("ok"))
    await turn(rt, sid, "hi")
    assert fake_openai.requests[0]["model"] == "fake-model-2"
    assert "Be brief." in fake_openai.requests[0]["messages"][0]["content"]


# --- branches ---------------------------------------------------------------------------------------
async def test_edit_makes_a_branch_and_only_the_active_branch_is_sent(
    fake_openai: FakeOpenAI, make_runtime: Any, tools_json: Path
) -> None:
    rt = await make_runtime()
    sid = (await rt.create_session()).id
    fake_openai.push(text_reply("A1"), text_reply("A2"), text_reply("B2"), text_reply("B3"))
    await turn(rt, sid, "q1")
    second, _ = await turn(rt, sid, "q2")
    edited = await rt.edit(sid, second.run_id, "q2 edited")
    await edited.wait()
    assert texts(fake_openai.messages(-1)) == [("user", "q1"), ("assistant", "A1"), ("user", "q2 edited")]
    await turn(rt, sid, "q3")  # continues the edited branch
    assert texts(fake_openai.messages(-1)) == [
        ("user", "q1"),
        ("assistant", "A1"),
        ("user", "q2 edited"),
        ("assistant", "B2"),
        ("user", "q3"),
    ]
    infos = await rt.branch_infos(sid)
    info = infos[edited.run_id]
    assert (info.edit_index, info.edit_count) == (2, 2) and info.edit_target(-1) == second.run_id
    # page back to the first version: the chat shows it, and the old branch is what the model gets next
    assert await rt.select_branch(sid, second.run_id)
    shown = [(m.role, m.content) for m in await rt.load_messages(sid)]
    assert shown == [("user", "q1"), ("assistant", "A1"), ("user", "q2"), ("assistant", "A2")]
    everything = await rt.history.messages(sid, all_branches=True)
    assert {m.content for m in everything} >= {"q2 edited", "B2", "q3", "B3"}  # nothing was lost
    # a restart shows the branch the user was on
    rt2 = AgentRuntime.create(make_settings(fake_openai), tools_json=tools_json, api_key=TEST_KEY, logs=False)
    try:
        assert [(m.role, m.content) for m in await rt2.load_messages(sid)] == shown
    finally:
        await rt2.close()


async def test_regenerate_keeps_both_answers(fake_openai: FakeOpenAI, make_runtime: Any) -> None:
    rt = await make_runtime()
    sid = (await rt.create_session()).id
    fake_openai.push(text_reply("first answer"), text_reply("second answer"))
    first, _ = await turn(rt, sid, "tell me a joke")
    again = await rt.regenerate(sid)
    done = await again.wait()
    assert done.text == "second answer"
    assert texts(fake_openai.messages(-1)) == [("user", "tell me a joke")]  # the old answer is not sent
    info = (await rt.branch_infos(sid))[again.run_id]
    assert (info.answer_index, info.answer_count, info.edit_count) == (2, 2, 1)
    assert info.answer_target(-1) == first.run_id
    await rt.select_branch(sid, first.run_id)
    assert [m.content for m in await rt.load_messages(sid)] == ["tell me a joke", "first answer"]
    await rt.select_branch(sid, again.run_id)
    assert [m.content for m in await rt.load_messages(sid)] == ["tell me a joke", "second answer"]


async def test_retry_after_an_error_replaces_the_empty_attempt(fake_openai: FakeOpenAI, make_runtime: Any) -> None:
    rt = await make_runtime(make_settings(fake_openai))
    rt.loop.provider.config.max_retries = 0
    for p in rt._providers.values():
        p.config.max_retries = 0
    sid = (await rt.create_session()).id
    fake_openai.push(error_reply(400, "bad request"), text_reply("works now"))
    failed, _ = await turn(rt, sid, "do it")
    assert failed.reason == "error"
    retried = await rt.retry(sid, failed.run_id)
    done = await retried.wait()
    assert done.text == "works now"
    assert [m.content for m in await rt.load_messages(sid)] == ["do it", "works now"]
    info = (await rt.branch_infos(sid))[retried.run_id]
    assert info.answer_count == 1  # the failed attempt had nothing: it was replaced, not kept


async def test_delete_an_exchange_keeps_the_rest_of_the_chat(fake_openai: FakeOpenAI, make_runtime: Any) -> None:
    rt = await make_runtime()
    sid = (await rt.create_session()).id
    fake_openai.push(text_reply("A1"), text_reply("A2"), text_reply("A3"), text_reply("A4"))
    await turn(rt, sid, "q1")
    second, _ = await turn(rt, sid, "q2")
    await turn(rt, sid, "q3")
    assert await rt.delete_turn(sid, second.run_id)
    assert [m.content for m in await rt.load_messages(sid)] == ["q1", "A1", "q3", "A3"]
    await turn(rt, sid, "q4")
    assert texts(fake_openai.messages(-1)) == [
        ("user", "q1"),
        ("assistant", "A1"),
        ("user", "q3"),
        ("assistant", "A3"),
        ("user", "q4"),
    ]


# --- usage and titles ---------------------------------------------------------------------------------
async def test_tokens_are_estimated_when_the_endpoint_sends_no_usage(
    fake_openai: FakeOpenAI, make_runtime: Any
) -> None:
    rt = await make_runtime()
    sid = (await rt.create_session()).id
    fake_openai.push(
        text_reply("这是一个没有用量信息的回答。"),
        text_reply("measured", usage={"prompt_tokens": 120, "completion_tokens": 7, "total_tokens": 127}),
    )
    _, events = await turn(rt, sid, "你好，请介绍一下你自己")
    [estimated] = of(events, "usage_reported")
    assert estimated.estimated and estimated.prompt_tokens > 0 and estimated.completion_tokens > 0
    assert estimated.model == "fake-model" and estimated.round == 1
    _, events = await turn(rt, sid, "again")
    [measured] = of(events, "usage_reported")
    assert (measured.prompt_tokens, measured.completion_tokens, measured.estimated) == (120, 7, False)
    total = await rt.usage(sid)
    assert total.prompt_tokens == estimated.prompt_tokens + 120 and total.estimated
    assert total.cost is None  # no price known for fake-model: no cost shown


async def test_cost_from_the_users_price(fake_openai: FakeOpenAI, make_runtime: Any) -> None:
    from weclaw_desktop.settings.conversation import ModelPrice

    settings = make_settings(fake_openai)
    settings.provider.prices = {"fake-model": ModelPrice(input_per_m=2.0, output_per_m=8.0, currency="USD")}
    rt = await make_runtime(settings)
    sid = (await rt.create_session()).id
    fake_openai.push(
        text_reply("x", usage={"prompt_tokens": 1_000_000, "completion_tokens": 500_000, "total_tokens": 1_500_000})
    )
    await turn(rt, sid, "hi")
    assert (await rt.usage(sid)).cost == {"USD": 6.0}


async def test_the_model_titles_a_new_chat_and_the_users_title_wins(fake_openai: FakeOpenAI, make_runtime: Any) -> None:
    settings = make_settings(fake_openai)
    settings.agent.model_titles = True
    rt = await make_runtime(settings, origin=Origin.GUI)
    titled: list[tuple[str, str]] = []
    rt.title_listeners.append(lambda sid, title: titled.append((sid, title)))
    sid = (await rt.create_session()).id
    fake_openai.push(text_reply("Here is a plan for the trip."), text_reply("Title: “Trip to Hangzhou”."))
    await turn(rt, sid, "Please help me **plan** a trip to Hangzhou next week\nwith kids")
    import asyncio

    for _ in range(200):
        if titled:
            break
        await asyncio.sleep(0.02)
    assert titled == [(sid, "Trip to Hangzhou")]
    assert (await rt.get_session(sid)).title == "Trip to Hangzhou"
    assert fake_openai.requests[1]["max_tokens"] == 40 and "tools" not in fake_openai.requests[1]
    assert [r.round for r in await rt.usage_rows(sid)] == [1, 0]  # the title request is counted too
    await rt.rename_session(sid, "Mine")
    rt.after_turn(sid, "completed")
    await asyncio.sleep(0.1)
    assert (await rt.get_session(sid)).title == "Mine"


async def test_without_a_model_title_the_first_line_is_cleaned(fake_openai: FakeOpenAI, make_runtime: Any) -> None:
    rt = await make_runtime()
    sid = (await rt.create_session()).id
    fake_openai.push(text_reply("ok"))
    await turn(rt, sid, "```\ncode\n```\n你好，帮我把 `report.md` 转成 **Word** 文档 https://example.com")
    import asyncio

    for _ in range(100):
        if (await rt.get_session(sid)).title.startswith("把"):
            break
        await asyncio.sleep(0.02)
    assert (await rt.get_session(sid)).title == "把 report.md 转成 Word 文档"
