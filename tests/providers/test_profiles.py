"""Every preset's profile is complete and consistent (resources/providers.toml is data: it must be right as data).

What must survive: each preset has a profile that says how reasoning arrives and what goes back, how thinking is
switched (or that it cannot be), which models it suggests (current names, the default among them) and where the
rules come from; a typed URL of a known provider gets that provider's rules; the custom endpoint's generic
profile accepts every reasoning shape and sends back the reasoning of tool-call turns; a broken profiles file is a
clear error, not a silent default; thinking requests the profile cannot express are refused with a reason.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from weclaw_desktop.agent.presets import PRESETS
from weclaw_desktop.agent.provider import profiles as profiles_mod
from weclaw_desktop.agent.provider.profiles import get_profile, profile_for, profiles
from weclaw_desktop.agent.provider.request import (
    ThinkingChoice,
    ThinkingUnsupported,
    build_body,
    check_thinking,
    thinking_body,
)
from weclaw_desktop.paths import resource_path

LOCAL = {"ollama", "lmstudio", "custom"}


def test_every_preset_has_a_complete_profile() -> None:
    table = profiles()
    assert list(PRESETS) == list(table)
    assert set(PRESETS) >= {"openai", "deepseek", "qwen", "zhipu", "moonshot", "siliconflow", "openrouter", "ollama"}
    for key, profile in table.items():
        r, t = profile.reasoning, profile.thinking
        assert profile.label and profile.sources, key
        assert all(s.startswith("https://") for s in profile.sources), key
        if key not in LOCAL:
            assert profile.base_url.startswith("https://") and profile.key_url.startswith("https://"), key
            assert profile.hosts and all(h in profile.base_url or "." in h for h in profile.hosts), key
            assert profile.default_model, key
            names = PRESETS[key].known_models
            assert profile.default_model in names, key
            if profile.models.listing == "none" or profile.models.capabilities == "none":
                assert profile.models.known, f"{key}: nothing says what its models can do"
                assert not profile.models.lookup(profile.default_model).empty, key
        if r.send_back != "never":
            assert r.fields or r.details_field, f"{key}: sends back reasoning it cannot receive"
        if r.send_field:
            assert r.send_back != "never", key
        if r.placeholder:
            assert r.send_field and r.send_back == "tool_turns", key
        if t.effort_path:
            assert t.efforts, f"{key}: an effort setting without levels"
        else:
            assert not t.efforts, key
        assert t.default in ("on", "off", "model")


def test_2024_model_names_are_gone_from_the_defaults() -> None:
    old = {"gpt-4o-mini", "deepseek-chat", "glm-4-flash", "moonshot-v1-8k", "Qwen/Qwen2.5-7B-Instruct", "qwen2.5:7b"}
    assert not old & {p.default_model for p in PRESETS.values()}


def test_known_providers_by_typed_url_and_the_generic_profile() -> None:
    assert profile_for("", "https://api.deepseek.com").key == "deepseek"
    assert profile_for("custom", "https://api.moonshot.ai/v1/").key == "moonshot"
    assert profile_for("", "https://openrouter.ai/api/v1").key == "openrouter"
    assert profile_for("", "http://10.0.0.5:8000/v1").key == "custom"
    assert profile_for("qwen", "http://127.0.0.1:1/v1").key == "qwen"  # the preset wins over the URL
    generic = get_profile("")
    assert generic.key == "custom"
    assert set(generic.reasoning.fields) >= {"reasoning_content", "reasoning"}
    assert generic.reasoning.details_field == "reasoning_details" and "think" in generic.reasoning.think_tags
    assert generic.reasoning.send_back == "tool_turns" and generic.reasoning.send_field == ""
    assert generic.echo.unknown


def test_thinking_controls_become_body_fields() -> None:
    deepseek, qwen, openrouter = get_profile("deepseek"), get_profile("qwen"), get_profile("openrouter")
    assert thinking_body(deepseek.thinking, ThinkingChoice()) == {}
    assert thinking_body(deepseek.thinking, ThinkingChoice("off")) == {"thinking": {"type": "disabled"}}
    assert thinking_body(deepseek.thinking, ThinkingChoice(effort="max")) == {
        "thinking": {"type": "enabled"},
        "reasoning_effort": "max",
    }
    assert thinking_body(qwen.thinking, ThinkingChoice("on")) == {"enable_thinking": True}
    assert thinking_body(openrouter.thinking, ThinkingChoice(effort="high")) == {
        "reasoning": {"enabled": True, "effort": "high"}
    }
    with pytest.raises(ThinkingUnsupported, match="low, high, max"):
        check_thinking(deepseek.thinking, ThinkingChoice(effort="medium"), "DeepSeek")
    with pytest.raises(ThinkingUnsupported, match="no thinking effort"):
        check_thinking(qwen.thinking, ThinkingChoice(effort="high"), "Qwen")
    with pytest.raises(ThinkingUnsupported, match="switch thinking off"):
        check_thinking(get_profile("gemini").thinking, ThinkingChoice("off"), "Gemini")


def test_rejected_parameters_are_never_sent() -> None:
    body = build_body(
        get_profile("zhipu"),
        model="glm-4.7",
        messages=[{"role": "user", "content": "hi"}],
        tools=[],
        thinking=ThinkingChoice("off"),
        source="zhipu@x",
        echo=True,
        stream_usage=True,
    )
    assert "stream_options" not in body and body["thinking"] == {"type": "disabled"}


def test_a_broken_profiles_file_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tomllib.loads(resource_path("providers.toml").read_text(encoding="utf-8"))
    assert data["providers"]["deepseek"]["reasoning"]["send_back"] == "tool_turns"
    broken = tmp_path / "resources" / "providers.toml"
    broken.parent.mkdir()
    broken.write_text(
        resource_path("providers.toml")
        .read_text(encoding="utf-8")
        .replace('send_back = "tool_turns"', 'send_back = "sometimes"', 1),
        encoding="utf-8",
    )
    monkeypatch.setattr(profiles_mod, "resource_path", lambda *parts: tmp_path.joinpath("resources", *parts))
    profiles.cache_clear()
    try:
        with pytest.raises(profiles_mod.ProfileError, match="send_back"):
            profiles()
    finally:
        monkeypatch.undo()
        profiles.cache_clear()
    assert profiles()["deepseek"].reasoning.send_back == "tool_turns"
