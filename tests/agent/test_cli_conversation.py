"""``weclaw chat --provider NAME`` answers with a saved configuration (and the chat remembers it);
``--attach FILE`` (repeatable) sends the files' text and images exactly as the desktop app does, and refuses an
image for a model that cannot see it before anything is sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakeopenai import FakeOpenAI, text_reply
from test_cli import chat, run_inproc  # noqa: F401 - the fixture
from weclaw_agent_test_tools import tiny_png

from weclaw_desktop.settings import ProviderSettings, SettingsStore


def endpoint(fake: FakeOpenAI, model: str) -> list[str]:
    return ["--base-url", fake.base_url, "--model", model]


def save_two_providers(fake: FakeOpenAI, other: FakeOpenAI) -> None:
    store = SettingsStore.open()

    def edit(s):  # type: ignore[no-untyped-def]
        s.providers.entries = [
            ProviderSettings(name="Main", preset="custom", base_url=fake.base_url, model="fake-model", max_retries=0),
            ProviderSettings(
                name="Vision", preset="custom", base_url=other.base_url, model="gpt-4o", api_key_name="api_key.vision"
            ),
        ]
        s.providers.active = "Main"
        s.agent.exposure = "all"

    store.update(edit)


async def test_provider_picks_a_saved_configuration(
    fake_openai: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_support import TEST_KEY, write_manifest

    tools = write_manifest(tmp_path / "tools.json")
    monkeypatch.setenv("WECLAW_API_KEY", TEST_KEY)
    async with FakeOpenAI(model="gpt-4o") as other:
        save_two_providers(fake_openai, other)
        other.push(text_reply("from Vision"))
        code, out, err = await run_inproc(
            ["chat", "hi", "--new", "--provider", "Vision", "--tools", str(tools)], capsys
        )
        assert code == 0, err
        assert out.strip() == "from Vision" and other.requests[0]["model"] == "gpt-4o" and fake_openai.requests == []
        session = err.split("[session ")[1].split("]")[0]
        other.push(text_reply("still Vision"))  # the chat remembers its configuration
        code, out, _ = await run_inproc(["chat", "again", "--session", session, "--tools", str(tools)], capsys)
        assert out.strip() == "still Vision"
        code, _, err = await run_inproc(["chat", "hi", "--provider", "Nope", "--tools", str(tools)], capsys)
        assert code == 2 and "no saved provider configuration called 'Nope' (saved: Main, Vision)" in err


async def test_attach_sends_text_and_images(fake_openai: FakeOpenAI, chat, tmp_path: Path) -> None:  # noqa: F811
    notes = tmp_path / "notes.md"
    notes.write_text("# Trip\n- Hangzhou, 3 days", encoding="utf-8")
    shot = tmp_path / "shot.png"
    shot.write_bytes(tiny_png())
    fake_openai.push(text_reply("ok"))
    code, _out, err = await chat(
        "summarise",
        "--new",
        "--attach",
        str(notes),
        "--attach",
        str(shot),
        *endpoint(fake_openai, "gpt-4o"),
        endpoint=False,
    )
    assert code == 0, err
    assert "attached notes.md (text/markdown" in err and "attached shot.png (image/png" in err
    user = fake_openai.messages(0)[-1]
    assert [p["type"] for p in user["content"]] == ["text", "image_url"]
    assert "Hangzhou, 3 days" in user["content"][0]["text"]


async def test_attach_refuses_an_image_for_a_text_model(fake_openai: FakeOpenAI, chat, tmp_path: Path) -> None:  # noqa: F811
    shot = tmp_path / "shot.png"
    shot.write_bytes(tiny_png())
    code, _, err = await chat(
        "look", "--new", "--attach", str(shot), *endpoint(fake_openai, "deepseek-chat"), endpoint=False
    )
    assert code == 2 and "cannot see images, so shot.png was not sent" in err
    assert fake_openai.requests == []
    code, _, err = await chat("look", "--new", "--attach", str(tmp_path / "missing.txt"))
    assert code == 2 and "missing.txt" in err


async def test_json_usage_events_carry_the_estimate(fake_openai: FakeOpenAI, chat) -> None:  # noqa: F811
    fake_openai.push(text_reply("hello there"))
    code, out, _ = await chat("hi", "--new", "--json")
    usage = [json.loads(line) for line in out.splitlines() if '"usage_reported"' in line]
    assert code == 0 and usage[0]["estimated"] is True and usage[0]["model"] == "fake-model"
