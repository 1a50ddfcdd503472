"""The provider on its own against the fake server: assembly, usage, and every error kind."""

from __future__ import annotations

import pytest
from fakeopenai import FakeOpenAI, call, drop_reply, error_reply, text_reply, tool_reply

from weclaw_desktop.agent.presets import PRESETS, get_preset, preset_for_url
from weclaw_desktop.agent.provider import CallAssembler, Provider, ProviderConfig, ProviderError

KEY = "sk-provider-test-123456"


def provider(fake: FakeOpenAI, **kw: object) -> Provider:
    cfg = ProviderConfig(base_url=fake.base_url, model="fake-model", api_key=KEY, max_retries=0, timeout_s=10)
    for k, v in kw.items():
        setattr(cfg, k, v)
    return Provider(cfg)


TOOL = {"type": "function", "function": {"name": "echo_say", "description": "d", "parameters": {"type": "object"}}}


async def test_text_usage_and_request_shape(fake_openai: FakeOpenAI) -> None:
    p = provider(fake_openai)
    seen: list[str] = []
    fake_openai.push(text_reply("a", "b", "c", usage={"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}))
    result = await p.stream([{"role": "user", "content": "hi"}], [TOOL], on_text=seen.append)
    await p.close()
    assert (result.text, result.finish_reason, result.tool_calls) == ("abc", "stop", [])
    assert seen == ["a", "b", "c"]
    assert result.usage is not None and (result.usage.prompt_tokens, result.usage.total_tokens) == (3, 5)
    body = fake_openai.requests[0]
    assert body["model"] == "fake-model" and body["stream"] is True and body["tools"] == [TOOL]
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [{"role": "user", "content": "hi"}]


async def test_parallel_calls_assembled_by_index_even_interleaved(fake_openai: FakeOpenAI) -> None:
    p = provider(fake_openai)
    fake_openai.push(
        tool_reply(
            call("a_one", {"x": "长文本" * 5}, id="id1", split=6),
            call("b_two", {"y": [1, 2, 3]}, id="id2", split=4),
            text=("Let me check.",),
            interleave=True,
        )
    )
    result = await p.stream([{"role": "user", "content": "go"}], [TOOL])
    await p.close()
    assert result.finish_reason == "tool_calls" and result.text == "Let me check."
    assert [(c.index, c.id, c.name, c.arguments) for c in result.tool_calls] == [
        (0, "id1", "a_one", '{"x": "' + "长文本" * 5 + '"}'),
        (1, "id2", "b_two", '{"y": [1, 2, 3]}'),
    ]
    assert result.tool_calls[0].as_message()["function"]["name"] == "a_one"


def test_assembler_without_index_or_id() -> None:
    """Servers that omit index (and sometimes id) still get whole calls; a missing id is made up."""
    a = CallAssembler()
    a.add({"index": None, "id": "x1", "function": {"name": "f", "arguments": '{"a"'}})
    a.add({"index": None, "id": "x1", "function": {"name": None, "arguments": ": 1}"}})
    a.add({"index": None, "id": None, "function": {"name": "g", "arguments": "{}"}})
    calls = a.calls()
    assert [(c.id, c.name, c.arguments) for c in calls[:1]] == [("x1", "f", '{"a": 1}')]
    assert calls[1].name == "g" and calls[1].id.startswith("call_1_")


@pytest.mark.parametrize(
    ("status", "message", "kind", "text"),
    [
        (401, "bad key", "auth", "rejected the API key (401)"),
        (403, "forbidden", "auth", "rejected the API key (403)"),
        (429, "You exceeded your current quota", "rate_limit", "Your quota may be used up"),
        (500, "boom", "server", "The endpoint failed (500): boom"),
        (404, "model not found", "bad_request", "the model 'fake-model' or the base URL"),
        (400, "messages: too long", "bad_request", "refused the request (400): messages: too long"),
        (400, "this model does not support tools", "tools_unsupported", "does not accept tools"),
        (422, "Unrecognized request argument: tool_choice / functions", "tools_unsupported", "tool calling"),
    ],
)
async def test_http_errors_become_clear_messages(
    fake_openai: FakeOpenAI, status: int, message: str, kind: str, text: str
) -> None:
    p = provider(fake_openai)
    fake_openai.push(error_reply(status, message))
    with pytest.raises(ProviderError) as info:
        await p.stream([{"role": "user", "content": "x"}], [TOOL])
    await p.close()
    assert info.value.kind == kind and text in info.value.message
    assert "\n" not in info.value.message and KEY not in info.value.message


async def test_tools_error_without_tools_is_not_misreported(fake_openai: FakeOpenAI) -> None:
    p = provider(fake_openai)
    fake_openai.push(error_reply(400, "bad function in prompt"))
    with pytest.raises(ProviderError) as info:
        await p.stream([{"role": "user", "content": "x"}])
    await p.close()
    assert info.value.kind == "bad_request"


async def test_stream_options_rejected_then_retried_without(fake_openai: FakeOpenAI) -> None:
    p = provider(fake_openai)
    fake_openai.push(error_reply(400, "Unknown parameter: stream_options"), text_reply("fine"), text_reply("again"))
    assert (await p.stream([{"role": "user", "content": "x"}])).text == "fine"
    assert (await p.stream([{"role": "user", "content": "y"}])).text == "again"
    await p.close()
    assert "stream_options" in fake_openai.requests[0]
    assert "stream_options" not in fake_openai.requests[1] and "stream_options" not in fake_openai.requests[2]


async def test_retries_429_then_gives_up_clearly(fake_openai: FakeOpenAI) -> None:
    p = provider(fake_openai, max_retries=1)
    fake_openai.push(error_reply(429, "slow", retry_after=0.01), error_reply(429, "slow", retry_after=0.01))
    with pytest.raises(ProviderError) as info:
        await p.stream([{"role": "user", "content": "x"}])
    await p.close()
    assert info.value.kind == "rate_limit" and info.value.retryable and len(fake_openai.requests) == 2


async def test_dropped_stream_keeps_partial_text(fake_openai: FakeOpenAI) -> None:
    p = provider(fake_openai)
    fake_openai.push(drop_reply("half an ", "answer"))
    with pytest.raises(ProviderError) as info:
        await p.stream([{"role": "user", "content": "x"}])
    await p.close()
    assert info.value.kind == "connection" and info.value.partial == "half an answer"
    assert "dropped after part of the answer" in info.value.message


async def test_unreachable_endpoint_and_missing_setup() -> None:
    p = Provider(ProviderConfig(base_url="http://127.0.0.1:9/v1", model="m", api_key=KEY, max_retries=0))
    with pytest.raises(ProviderError) as info:
        await p.stream([{"role": "user", "content": "x"}])
    assert info.value.kind == "connection" and "Cannot reach http://127.0.0.1:9/v1" in info.value.message
    await p.close()

    with pytest.raises(ProviderError) as info:
        await Provider(ProviderConfig(base_url="", model="m")).stream([])
    assert info.value.kind == "not_configured"
    with pytest.raises(ProviderError) as info:
        await Provider(ProviderConfig(base_url="https://api.deepseek.com/v1", model="m")).stream([])
    assert info.value.kind == "auth" and "No API key" in info.value.message
    with pytest.raises(ProviderError) as info:
        await Provider(ProviderConfig(base_url="https://x/v1", model="")).stream([])
    assert info.value.kind == "not_configured" and "model" in info.value.message


async def test_local_servers_need_no_key(fake_openai: FakeOpenAI) -> None:
    p = Provider(ProviderConfig(base_url=fake_openai.base_url, model="m", preset="ollama", api_key=None))
    fake_openai.push(text_reply("local"))
    assert (await p.stream([{"role": "user", "content": "x"}])).text == "local"
    await p.close()
    assert fake_openai.headers[0]["Authorization"] == "Bearer not-needed"


async def test_models_listing(fake_openai: FakeOpenAI) -> None:
    p = provider(fake_openai)
    assert await p.list_models() == ["fake-model", "fake-model-2"]
    assert await p.check() == "2 models available"
    fake_openai.models_status = 401
    with pytest.raises(ProviderError) as info:
        await p.list_models()
    assert info.value.kind == "auth"
    await p.close()
    zhipu = Provider(
        ProviderConfig(base_url="https://open.bigmodel.cn/api/paas/v4", model="glm-4-flash", preset="zhipu")
    )
    assert await zhipu.list_models() == list(PRESETS["zhipu"].known_models)


def test_presets() -> None:
    expected = {"openai", "deepseek", "qwen", "zhipu", "moonshot", "siliconflow", "openrouter", "ollama", "lmstudio"}
    assert expected <= set(PRESETS) and "custom" in PRESETS
    for preset in PRESETS.values():
        assert preset.key == "custom" or preset.base_url.startswith(("https://", "http://localhost"))
    assert not PRESETS["ollama"].needs_key and PRESETS["deepseek"].needs_key
    assert preset_for_url("https://api.deepseek.com/v1/").key == "deepseek"
    assert preset_for_url("https://example.com/v1").key == "custom"
    assert get_preset("nope").key == "custom"
