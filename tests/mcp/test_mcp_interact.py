"""What a server asks of the client, end to end with our SDK server: elicitation (accept, decline, cancel,
and no user agent at all), sampling through the real provider against the fake OpenAI server (only after
a yes, showing what is asked), roots (the allowed folders) and log notifications."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fakeopenai import FakeOpenAI, text_reply
from toolrun import Direct, tool_context

from weclaw_desktop.agent.mcp_client import ProviderSampler
from weclaw_desktop.agent.provider import Provider, ProviderConfig
from weclaw_desktop.mcp import Backoff, McpManager, ServerState
from weclaw_desktop.mcp.interact import ClientHooks, ElicitAnswer, FormRequest, SamplingRequest, UrlRequest
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import McpServerSettings
from weclaw_desktop.toolkit import AutoApprove, ToolCall, ToolRegistry


class ScriptedUser:
    """A person who answers from a script and remembers what they were asked."""

    def __init__(self, answers: list[ElicitAnswer] | None = None, approve: bool = True) -> None:
        self.answers = list(answers or [])
        self.approve = approve
        self.forms: list[FormRequest | UrlRequest] = []
        self.samplings: list[SamplingRequest] = []

    async def elicit(self, request: FormRequest | UrlRequest) -> ElicitAnswer:
        self.forms.append(request)
        return self.answers.pop(0)

    async def approve_sampling(self, request: SamplingRequest) -> bool:
        self.samplings.append(request)
        return self.approve


async def _manager(registry: ToolRegistry, tmp_path: Path, hooks: ClientHooks | None) -> McpManager:
    return McpManager(
        registry, SecretStore(), backoff=Backoff(initial=2.0), connect_timeout=20, log_dir=tmp_path, hooks=hooks
    )


async def _run(manager: McpManager, settings: McpServerSettings, function: str, **arguments: Any) -> Any:
    tool = manager.start(settings)
    assert tool is not None
    assert await tool.connection.wait_for(ServerState.CONNECTED, ServerState.DOWN, within=20)
    assert tool.connection.state is ServerState.CONNECTED, tool.connection.error
    call = ToolCall(id="c1", name=function, arguments=json.dumps(arguments))
    return await Direct(manager.registry, gate=AutoApprove()).dispatch(call, tool_context())


async def test_elicitation_accept_decline_cancel(
    registry: ToolRegistry, tmp_path: Path, sdk_settings: Callable[..., McpServerSettings]
) -> None:
    user = ScriptedUser(
        [
            ElicitAnswer("accept", {"name": "李雷", "color": "green", "age": 30, "subscribe": True}),
            ElicitAnswer("decline"),
            ElicitAnswer("cancel"),
        ]
    )
    manager = await _manager(registry, tmp_path, ClientHooks(user=user))
    try:
        settings = sdk_settings(trusted=True)
        result = await _run(manager, settings, "mcp_sdk_ask_user")
        assert json.loads(result.output) == {
            "action": "accept",
            "content": {"age": 30, "color": "green", "name": "李雷", "subscribe": True},
        }
        [form] = user.forms
        assert isinstance(form, FormRequest) and form.server == "sdk" and form.message == "Who are you?"
        assert [(f.name, f.kind, f.required) for f in form.fields] == [
            ("name", "string", True),
            ("age", "integer", False),
            ("color", "choice", True),
            ("subscribe", "boolean", False),
        ]
        assert form.fields[2].choices == (("red", "red"), ("green", "green"), ("blue", "blue"))
        assert form.problems({"name": "", "color": "pink"}) == [
            "color: 'pink' is not one of ['red', 'green', 'blue']",
            "name: '' should be non-empty",
        ]
        dispatcher = Direct(registry, gate=AutoApprove())
        call = ToolCall(id="c2", name="mcp_sdk_ask_user", arguments="{}")
        assert json.loads((await dispatcher.dispatch(call, tool_context())).output) == {
            "action": "decline",
            "content": None,
        }
        assert json.loads((await dispatcher.dispatch(call, tool_context())).output) == {
            "action": "cancel",
            "content": None,
        }
    finally:
        await manager.stop_all()


async def test_without_a_user_agent_elicitation_is_not_offered(
    registry: ToolRegistry, tmp_path: Path, sdk_settings: Callable[..., McpServerSettings]
) -> None:
    """Nobody can answer (a schedule, a script): the server is told the client cannot elicit, no fake answer."""
    manager = await _manager(registry, tmp_path, None)
    try:
        result = await _run(manager, sdk_settings(trusted=True), "mcp_sdk_ask_user")
        assert not result.succeeded
        assert "accept" not in result.output
    finally:
        await manager.stop_all()


async def test_sampling_goes_through_the_provider_only_after_a_yes(
    registry: ToolRegistry, tmp_path: Path, sdk_settings: Callable[..., McpServerSettings], fake_openai: FakeOpenAI
) -> None:
    provider = Provider(ProviderConfig(base_url=fake_openai.base_url, model="fake-model", api_key="sk-test"))
    user = ScriptedUser(approve=True)
    manager = await _manager(registry, tmp_path, ClientHooks(user=user, sampler=ProviderSampler(lambda: provider)))
    try:
        fake_openai.push(text_reply("Cats sleep a lot."))
        result = await _run(manager, sdk_settings(trusted=True), "mcp_sdk_summarize", text="A long text about cats.")
        assert result.output == "summary by fake-model: Cats sleep a lot."
        [asked] = user.samplings
        assert asked.server == "sdk" and asked.max_tokens == 50
        assert asked.system_prompt == "You write one-line summaries."
        assert asked.messages == (("user", "Summarise: A long text about cats."),)
        sent = fake_openai.messages(-1)
        assert sent == [
            {"role": "system", "content": "You write one-line summaries."},
            {"role": "user", "content": "Summarise: A long text about cats."},
        ]
        assert not fake_openai.requests[-1].get("tools")  # a server's sampling never gets the user's tools
        # refused: the model is never asked, the server gets an error
        user.approve = False
        requests = len(fake_openai.requests)
        call = ToolCall(id="c2", name="mcp_sdk_summarize", arguments=json.dumps({"text": "x"}))
        refused = await Direct(registry, gate=AutoApprove()).dispatch(call, tool_context())
        assert not refused.succeeded and "declined" in refused.output
        assert len(fake_openai.requests) == requests
    finally:
        await manager.stop_all()
        await provider.close()


async def test_roots_are_the_allowed_folders_and_logs_reach_the_log(
    registry: ToolRegistry,
    tmp_path: Path,
    sdk_settings: Callable[..., McpServerSettings],
    caplog: pytest.LogCaptureFixture,
) -> None:
    folders = [tmp_path / "projects", tmp_path / "文档"]
    for f in folders:
        f.mkdir()
    seen: list[tuple[str, str, Any]] = []
    hooks = ClientHooks(roots=lambda: folders, on_log=lambda s, level, data: seen.append((s, level, data)))
    manager = await _manager(registry, tmp_path, hooks)
    try:
        result = await _run(manager, sdk_settings(trusted=True), "mcp_sdk_where")
        assert json.loads(result.output) == [f.resolve().as_uri() for f in folders]
        with caplog.at_level(logging.INFO, logger="weclaw.mcp.sdk"):
            call = ToolCall(id="c2", name="mcp_sdk_shout_log", arguments="{}")
            assert (await Direct(registry, gate=AutoApprove()).dispatch(call, tool_context())).output == "logged"
        assert seen == [("sdk", "warning", "disk almost full")]
        assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records if r.name == "weclaw.mcp.sdk"] == [
            ("weclaw.mcp.sdk", "WARNING", "disk: disk almost full")
        ]
    finally:
        await manager.stop_all()
