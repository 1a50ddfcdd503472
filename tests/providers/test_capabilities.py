"""Model capabilities from the endpoint (OpenRouter, Ollama, LM Studio), the profile and the user; a model
marked without tools is offered none, and the turn says why.

What must survive: each endpoint's own report is read (OpenRouter's supported_parameters and modalities, Ollama's
/api/show capabilities and context length, LM Studio's v1 and v0 model lists); a value the user set wins over
both; "unknown" never withholds tools; when a model has no tools the request carries no tools, a ToolsWithheld
event names the model and the source, and the model still answers.
"""

from __future__ import annotations

from typing import Any

from agent_support import of, run_turn
from aiohttp import web
from provider_servers import RuleServer, turn_reply

from weclaw_desktop.settings import ModelCapabilitySettings


def _ollama(server: RuleServer, caps: list[str]) -> None:
    async def show(request: web.Request) -> web.Response:
        body = await request.json()
        server.shown = body["model"]  # type: ignore[attr-defined]
        return web.json_response({"capabilities": caps, "model_info": {"qwen3.context_length": 40960}})

    server.extra_routes.append(("POST", "/api/show", show))


async def test_ollama_model_without_tools_gets_none_and_is_told(rule_server: Any, runtime_on: Any) -> None:
    server = RuleServer()
    _ollama(server, ["completion", "thinking"])
    await server.start()
    try:
        server.push(turn_reply(reasoning=("No tools here.",), text=("I can only talk.",)))
        rt = await runtime_on(server, "ollama", model="gemma3:1b")
        done, events, _ = await run_turn(rt, "list my files")
        caps = await rt.provider.capabilities()
    finally:
        await server.stop()
    assert done.reason == "completed" and done.text == "I can only talk."
    assert "tools" not in server.requests[0]
    [withheld] = of(events, "tools_withheld")
    assert withheld.model == "gemma3:1b" and "by the endpoint" in withheld.reason
    assert of(events, "round_started")[0].tools == []
    assert (caps.caps.tools, caps.caps.reasoning, caps.caps.vision, caps.caps.context) == (False, True, False, 40960)
    assert caps.source("tools") == "endpoint"


async def test_the_user_overrides_the_endpoint(rule_server: Any, runtime_on: Any) -> None:
    server = RuleServer()
    _ollama(server, ["completion"])
    await server.start()
    try:
        server.push(turn_reply(text=("ok",)))
        rt = await runtime_on(
            server, "ollama", model="mine:7b", capabilities={"mine:7b": ModelCapabilitySettings(tools=True)}
        )
        done, events, _ = await run_turn(rt, "hi")
        caps = await rt.provider.capabilities()
    finally:
        await server.stop()
    assert done.reason == "completed" and of(events, "tools_withheld") == []
    assert server.tool_names(0)  # tools were offered
    assert caps.caps.tools is True and caps.source("tools") == "you" and caps.source("vision") == "endpoint"


async def test_openrouter_models_listing(rule_server: Any, runtime_on: Any) -> None:
    server = await rule_server()
    server.models_payload = [
        {
            "id": "a/tools",
            "supported_parameters": ["tools", "reasoning"],
            "architecture": {"input_modalities": ["text", "image"]},
            "context_length": 200000,
        },
        {
            "id": "b/plain",
            "supported_parameters": ["temperature"],
            "architecture": {"input_modalities": ["text"]},
            "context_length": 8192,
        },
    ]
    rt = await runtime_on(server, "openrouter", model="a/tools")
    rich = await rt.provider.capabilities("a/tools")
    plain = await rt.provider.capabilities("b/plain")
    unknown = await rt.provider.capabilities("c/unlisted")
    assert (rich.caps.tools, rich.caps.reasoning, rich.caps.vision, rich.caps.context) == (True, True, True, 200000)
    assert (plain.caps.tools, plain.caps.vision) == (False, False) and plain.tools_withheld
    assert unknown.caps.tools is None and not unknown.tools_withheld  # unknown never withholds tools


async def test_lmstudio_v1_then_v0(runtime_on: Any) -> None:
    v1 = RuleServer()

    async def models_v1(request: web.Request) -> web.Response:
        return web.json_response(
            {
                "models": [
                    {
                        "key": "qwen/qwen3.5-9b",
                        "capabilities": {"vision": True, "trained_for_tool_use": True},
                        "max_context_length": 262144,
                    }
                ]
            }
        )

    v1.extra_routes.append(("GET", "/api/v1/models", models_v1))
    v0 = RuleServer()

    async def models_v0(request: web.Request) -> web.Response:
        return web.json_response(
            {"data": [{"id": "old-model", "type": "llm", "capabilities": [], "max_context_length": 4096}]}
        )

    v0.extra_routes.append(("GET", "/api/v0/models", models_v0))
    await v1.start()
    await v0.start()
    try:
        a = await (await runtime_on(v1, "lmstudio", model="qwen/qwen3.5-9b")).provider.capabilities()
        b = await (await runtime_on(v0, "lmstudio", model="old-model")).provider.capabilities()
    finally:
        await v1.stop()
        await v0.stop()
    assert (a.caps.tools, a.caps.vision, a.caps.context) == (True, True, 262144)
    assert (b.caps.tools, b.caps.vision, b.caps.context) == (False, False, 4096)


async def test_profile_knowledge_when_the_endpoint_does_not_tell(rule_server: Any, runtime_on: Any) -> None:
    server = await rule_server()
    rt = await runtime_on(server, "deepseek", model="deepseek-v4-pro")
    caps = await rt.provider.capabilities()
    assert (caps.caps.tools, caps.caps.vision, caps.caps.reasoning) == (True, False, True)
    assert caps.source("tools") == "profile"
