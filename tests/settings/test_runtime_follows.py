"""The real runtime and dispatcher on a real settings.json: a bad field never lets a denied tool run, an
unreadable deny list locks the risky tools, and every save reaches the runtime through the store.

The model is the fake OpenAI server; it calls the denied tool anyway, as a confused or hostile model would.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from fakeopenai import FakeOpenAI, call, text_reply, tool_reply
from settings_support import TEST_KEY, read_json, user_file, write_settings, write_tools

from weclaw_desktop.agent.runtime import AgentRuntime
from weclaw_desktop.settings import Settings, SettingsStore
from weclaw_desktop.toolkit.base import Origin

Factory = Callable[..., Awaitable[AgentRuntime]]


@pytest.fixture
async def runtime_on(tmp_path: Path) -> AsyncIterator[Factory]:
    made: list[AgentRuntime] = []
    tools = write_tools(tmp_path)

    async def factory(store: SettingsStore | None = None, settings: Settings | None = None) -> AgentRuntime:
        rt = AgentRuntime.create(
            settings, store=store, tools_json=tools, api_key=TEST_KEY, origin=Origin.CLI, logs=False
        )
        made.append(rt)
        return rt

    yield factory
    for rt in made:
        await rt.close()


async def _turn(rt: AgentRuntime, text: str = "go") -> Any:
    session = await rt.create_session()
    return await rt.start_turn(session.id, text).wait()


def _tool_messages(fake: FakeOpenAI) -> dict[str, str]:
    """Tool results of the last request by call id (parallel calls may finish in any order)."""
    return {m["tool_call_id"]: m["content"] for m in fake.messages(-1) if m["role"] == "tool"}


async def test_a_bad_field_keeps_the_deny_list_and_a_denied_tool_stays_denied(
    fake_openai: FakeOpenAI, runtime_on: Factory
) -> None:
    write_settings(user_file(fake_openai.base_url, agent__max_rounds="ten"))
    store = SettingsStore.open()
    rt = await runtime_on(store)
    assert rt.loop.options.max_rounds == 12  # the bad field alone fell back
    calls = call("faulty_crash", {"text": "x"}, id="c1"), call("shouty_say", {"text": "y"}, id="c2")
    fake_openai.push(tool_reply(*calls), text_reply("ok"))
    done = await _turn(rt)
    assert done.reason == "completed"
    offered = fake_openai.tool_names(0)
    assert "echo_say" in offered
    assert not any(n.startswith(("faulty_", "shouty_")) for n in offered)  # denied and switched off: not offered
    results = _tool_messages(fake_openai)
    crash, say = results["c1"], results["c2"]
    assert "not available right now" in crash and "deny list" in crash  # called anyway: refused
    assert "not available right now" in say and "switched off" in say


async def test_an_unreadable_deny_list_locks_risky_tools_until_one_is_switched_on(
    fake_openai: FakeOpenAI, runtime_on: Factory
) -> None:
    """deny: "faulty" (a string, not a list) - nobody knows what the user denied, so every tool with a
    medium- or high-risk action is off; low-risk tools still work; the user's switch brings one back,
    through the store, and the runtime follows without a restart."""
    write_settings(user_file(fake_openai.base_url, tools__policy={"deny": "faulty"}))
    store = SettingsStore.open()
    rt = await runtime_on(store)
    fake_openai.push(tool_reply(call("faulty_crash", {"text": "x"}, id="c1")), text_reply("ok"))
    await _turn(rt)
    assert not any(n.startswith(("faulty_", "shouty_")) for n in fake_openai.tool_names(0))
    assert "echo_say" in fake_openai.tool_names(0)
    refusal = _tool_messages(fake_openai)["c1"]
    assert "disabled-settings-unreadable" in refusal

    store.update(lambda s: setattr(s.tools, "policy", s.tools.policy.with_switch("faulty", True)))
    assert rt.dispatcher.policy.enabled == ["faulty"]
    fake_openai.push(text_reply("ok"))
    await _turn(rt)
    assert "faulty_crash" in fake_openai.tool_names(-1) and "shouty_say" not in fake_openai.tool_names(-1)
    saved = read_json()["tools"]["policy"]
    assert saved["deny"] == "faulty" and "disabled_risks" not in saved  # the user's text is still there
    assert saved["enabled"] == ["faulty"]


async def test_every_save_reaches_the_runtime_through_the_store(fake_openai: FakeOpenAI, runtime_on: Factory) -> None:
    """Provider, policy, approval policy, tool config, exposure and loop options follow a save; only a
    provider change makes a new provider (running turns keep theirs)."""
    write_settings(user_file(fake_openai.base_url))
    store = SettingsStore.open()
    rt = await runtime_on(store)
    provider = rt.provider
    store.update(lambda s: setattr(s.tools.policy, "disabled", ["echo"]))
    assert rt.dispatcher.policy.disabled == ["echo"] and rt.provider is provider
    store.update(lambda s: setattr(s.agent, "max_rounds", 3))
    assert rt.loop.options.max_rounds == 3
    store.update(lambda s: s.agent.approvals.remembered.append("faulty_crash"))
    assert rt.dispatcher.approval_policy.remembered == ["faulty_crash"]
    store.update(lambda s: s.tools.config.update({"echo": {"prefix": ">> "}}))
    assert rt.registry.effective_config("echo")["prefix"] == ">> "
    store.update(lambda s: setattr(s.provider, "model", "fake-model-2"))
    assert rt.provider is not provider
    fake_openai.push(text_reply("ok"))
    await _turn(rt)
    assert fake_openai.requests[-1]["model"] == "fake-model-2"
    assert "echo_say" not in fake_openai.tool_names(-1)


async def test_a_runtime_without_the_store_is_fixed(fake_openai: FakeOpenAI, runtime_on: Factory) -> None:
    """``weclaw chat`` overrides settings for one run: that runtime must not follow the file."""
    write_settings(user_file(fake_openai.base_url))
    store = SettingsStore.open()
    rt = await runtime_on(settings=store.snapshot())
    store.update(lambda s: setattr(s.tools.policy, "disabled", ["echo"]))
    assert rt.dispatcher.policy.disabled == ["shouty"]


async def test_closing_the_runtime_unsubscribes(fake_openai: FakeOpenAI, runtime_on: Factory) -> None:
    write_settings(user_file(fake_openai.base_url))
    store = SettingsStore.open()
    rt = await runtime_on(store)
    await rt.close()
    store.update(lambda s: setattr(s.provider, "model", "after-close"))  # would build a provider if subscribed
    assert rt.settings.provider.model == "fake-model"
