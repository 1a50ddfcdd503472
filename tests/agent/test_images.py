"""Images reach a model that can see them, as ``image_url`` parts, and never reach one that cannot: an attached
image, and a picture a tool saved (the screen tool's screenshot, an MCP image) in the next round. A later turn
(and a restart) rebuilds the same request from the history; only the newest images are sent as pixels.

Vision is read from the model: "gpt-4o" sees images, "deepseek-chat" does not (agent/model_caps.py)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from agent_support import TEST_KEY, make_settings, of
from fakeopenai import FakeOpenAI, call, text_reply, tool_reply
from test_conversation import manifest_with_pictures, turn
from weclaw_agent_test_tools import tiny_png

from weclaw_desktop.agent.runtime import AgentRuntime
from weclaw_desktop.agent.runtime_chats import ImagesRefused
from weclaw_desktop.attachments import prepare_all, store_image_bytes
from weclaw_desktop.toolkit.base import Origin


def parts(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    return [p["type"] for p in content] if isinstance(content, list) else ["text"]


def image_urls(body: dict[str, Any]) -> list[str]:
    out = []
    for m in body["messages"]:
        if isinstance(m.get("content"), list):
            out += [p["image_url"]["url"] for p in m["content"] if p["type"] == "image_url"]
    return out


@pytest.fixture
async def vision_rt(fake_openai: FakeOpenAI, tmp_path: Path, make_runtime: Any) -> AgentRuntime:
    settings = make_settings(fake_openai)
    settings.provider.model = "gpt-4o"
    return await make_runtime(settings, tools_json=manifest_with_pictures(tmp_path))


@pytest.fixture
async def text_rt(fake_openai: FakeOpenAI, tmp_path: Path, make_runtime: Any) -> AgentRuntime:
    settings = make_settings(fake_openai)
    settings.provider.model = "deepseek-chat"
    return await make_runtime(settings, tools_json=manifest_with_pictures(tmp_path))


async def test_an_attached_image_reaches_a_vision_model_as_an_image_part(
    fake_openai: FakeOpenAI, vision_rt: AgentRuntime, tmp_path: Path
) -> None:
    note = tmp_path / "notes.txt"
    note.write_text("the dialog appears after login", encoding="utf-8")
    shot = tmp_path / "error-dialog.png"
    shot.write_bytes(tiny_png(rgb=(1, 2, 3)))
    atts = prepare_all([note, shot], store_dir=vision_rt.attachment_dir())
    sid = (await vision_rt.create_session()).id
    await vision_rt.check_attachments(sid, atts)  # no refusal for a vision model
    fake_openai.push(text_reply("It is a login error."), text_reply("Still the same picture."))
    await turn(vision_rt, sid, "what is this error?", attachments=atts)
    user = fake_openai.messages(0)[-1]
    assert parts(user) == ["text", "image_url"]
    assert "the dialog appears after login" in user["content"][0]["text"]
    assert "[Attached image: error-dialog.png]" in user["content"][0]["text"]
    url = user["content"][1]["image_url"]["url"]
    assert base64.b64decode(url.split(",", 1)[1]) == tiny_png(rgb=(1, 2, 3))
    await turn(vision_rt, sid, "and now?")  # the next turn is rebuilt from the history: same image
    assert image_urls(fake_openai.requests[1]) == [url]


async def test_an_image_is_refused_for_a_text_model_with_a_clear_message(
    fake_openai: FakeOpenAI, text_rt: AgentRuntime
) -> None:
    atts = [store_image_bytes(tiny_png(), store_dir=text_rt.attachment_dir(), name="shot.png")]
    sid = (await text_rt.create_session()).id
    with pytest.raises(ImagesRefused, match=r"The model deepseek-chat cannot see images, so shot\.png was not sent"):
        await text_rt.check_attachments(sid, atts)
    # a caller that sends it anyway: the pixels still never go to that model
    fake_openai.push(text_reply("I cannot see it."))
    await turn(text_rt, sid, "look", attachments=atts)
    assert image_urls(fake_openai.requests[0]) == []
    assert "was not shown: the model deepseek-chat does not accept images" in fake_openai.messages(0)[-1]["content"]


async def test_a_screenshot_reaches_a_vision_model_in_the_next_round(
    fake_openai: FakeOpenAI, vision_rt: AgentRuntime
) -> None:
    sid = (await vision_rt.create_session()).id
    fake_openai.push(tool_reply(call("pic_take", {"name": "screen.png"})), text_reply("I see a red square."))
    done, events = await turn(vision_rt, sid, "take a screenshot and tell me what you see")
    assert done.text == "I see a red square."
    second = fake_openai.messages(1)
    assert [m["role"] for m in second[-3:]] == ["assistant", "tool", "user"]
    assert parts(second[-1]) == ["text", "image_url"]
    assert "screen.png (from pic_take)" in second[-1]["content"][0]["text"]
    assert not of(events, "images_not_shown")
    # next turn, rebuilt from the history: the tool's picture follows its result again
    fake_openai.push(text_reply("ok"))
    await turn(vision_rt, sid, "thanks")
    again = fake_openai.messages(2)
    tool_at = next(i for i, m in enumerate(again) if m["role"] == "tool")
    assert again[tool_at + 1]["role"] == "user" and parts(again[tool_at + 1]) == ["text", "image_url"]


async def test_a_screenshot_is_not_shown_to_a_text_model_and_the_user_is_told(
    fake_openai: FakeOpenAI, text_rt: AgentRuntime
) -> None:
    sid = (await text_rt.create_session()).id
    fake_openai.push(tool_reply(call("pic_take", {})), text_reply("I saved it but cannot see it."))
    _done, events = await turn(text_rt, sid, "take a screenshot")
    assert image_urls(fake_openai.requests[1]) == []
    assert "does not accept images" in str(fake_openai.messages(1)[-1]["content"])
    [notice] = of(events, "images_not_shown")
    assert notice.model == "deepseek-chat" and notice.files[0].endswith("screenshot.png")


async def test_only_the_newest_images_are_sent_as_pixels(
    fake_openai: FakeOpenAI, vision_rt: AgentRuntime, tools_json: Path, tmp_path: Path
) -> None:
    sid = (await vision_rt.create_session()).id
    for i in range(6):
        att = store_image_bytes(tiny_png(rgb=(i, i, i)), store_dir=vision_rt.attachment_dir(), name=f"p{i}.png")
        fake_openai.push(text_reply(f"seen {i}"))
        await turn(vision_rt, sid, f"picture {i}", attachments=[att])
    assert len(image_urls(fake_openai.requests[-1])) == 4
    first_user = fake_openai.messages(-1)[1]
    assert isinstance(first_user["content"], str) and "Earlier image(s) not repeated" in first_user["content"]
    # a restart sends the same
    settings = make_settings(fake_openai)
    settings.provider.model = "gpt-4o"
    rt2 = AgentRuntime.create(
        settings, tools_json=manifest_with_pictures(tmp_path), api_key=TEST_KEY, origin=Origin.CLI, logs=False
    )
    try:
        fake_openai.push(text_reply("ok"))
        await turn(rt2, sid, "and?")
        assert image_urls(fake_openai.requests[-1]) == image_urls(fake_openai.requests[-2])
    finally:
        await rt2.close()
