"""The conversation features in the real window (offscreen Qt, qasync, real runtime, real SQLite, the fake OpenAI
server): the composer's model switcher sends the new model from the next message on and the chat remembers it;
the assistant picker gives a chat its prompt and tool profile (and the tool panel shows the profile); files
become chips that carry their text to the model; a pasted image reaches a vision model and is refused, with the
message and the files kept, for a text model; the real screen tool's screenshot reaches a vision model in the
next round; the status bar counts the chat's tokens, "≈" when estimated.

What must survive: what the user picks in the composer is exactly what is sent; nothing the user typed or
attached is lost when a message is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakeopenai import FakeOpenAI, call, text_reply, tool_reply
from helpers import tool_entry
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QColor, QDropEvent, QImage
from uihelpers import configured_settings, until

from weclaw_desktop.settings.conversation import AssistantSettings
from weclaw_desktop.ui.composer import Composer, start_folder


def image_parts(body: dict[str, Any]) -> int:
    return sum(
        1
        for m in body["messages"]
        if isinstance(m.get("content"), list)
        for p in m["content"]
        if p["type"] == "image_url"
    )


async def send(window: Any, qtbot: Any, text: str) -> None:
    qtbot.keyClicks(window.composer.edit, text)
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    await until(lambda: window.composer.busy or window.composer.edit.toPlainText(), what="turn start")
    await until(lambda: not window.composer.busy, what="turn end")


def notice_texts(window: Any) -> list[str]:
    from weclaw_desktop.ui.chat_view import NoticeWidget  # the chat view being rebuilt (#17): its notices

    return [w.text() for w in window.chat.findChildren(NoticeWidget)]


def pick(menu_owner: Any, label: str) -> None:
    action = next(a for a in menu_owner.menu().actions() if a.text().strip().endswith(label))
    action.trigger()


async def test_the_switcher_changes_the_model_of_this_chat_from_the_next_message(
    make_window: Any, fake_openai: FakeOpenAI, qtbot: Any
) -> None:
    settings = configured_settings(fake_openai)
    settings.provider.models = ["fake-model-2"]
    window = await make_window(settings)
    switcher = window.composer.model_switcher
    await until(lambda: switcher.text() == "fake-model", what="switcher shows the model")
    fake_openai.push(text_reply("one"), text_reply("two"))
    await send(window, qtbot, "first")
    pick(switcher, "fake-model-2")
    await until(lambda: switcher.text() == "fake-model-2")
    sid = window.controller.session_id
    await until(lambda: window.chat_setup.pending == {}, what="saved")
    await send(window, qtbot, "second")
    assert [r["model"] for r in fake_openai.requests] == ["fake-model", "fake-model-2"]
    assert (await window.runtime.chat_setup(sid)).model == "fake-model-2"
    # another chat shows its own model; coming back shows this one again
    await window.controller.new_session()
    await until(lambda: switcher.text() == "fake-model")
    await window.controller.open_session(sid)
    await until(lambda: switcher.text() == "fake-model-2")


async def test_the_assistant_picker_gives_the_chat_its_prompt_and_tools(
    make_window: Any, fake_openai: FakeOpenAI, qtbot: Any
) -> None:
    settings = configured_settings(fake_openai)
    settings.assistants.entries = [
        *settings.assistants.entries,
        AssistantSettings(id="echoer", name="Echoer", icon="🔁", system_prompt="Repeat things.", tools=["echo"]),
    ]
    window = await make_window(settings)
    picker = window.composer.assistant_picker
    await until(lambda: "WeClaw" in picker.text())
    pick(picker, "Echoer")  # before the chat exists: remembered for the new chat
    await until(lambda: "Echoer" in picker.text())
    await until(lambda: window.board.state("work") == "hidden", what="the panel shows the profile")
    tip = " ".join(d.message for d in window.board.rows["work"].diagnostics)
    assert "not among the tools of the assistant 'Echoer'" in tip
    fake_openai.push(tool_reply(call("work_run", {})), text_reply("done"))
    await send(window, qtbot, "go")
    body = fake_openai.requests[0]
    assert "Repeat things." in body["messages"][0]["content"]
    assert fake_openai.tool_names(0) == ["echo_say", "echo_shout"]
    card = next(iter(window.chat.cards.values()))
    assert card.call.status == "denied"  # called anyway: refused, never run
    assert (await window.runtime.chat_setup(window.controller.session_id)).assistant == "echoer"


async def test_dropped_files_become_chips_and_their_text_reaches_the_model(
    make_window: Any, fake_openai: FakeOpenAI, qtbot: Any, tmp_path: Path
) -> None:
    window = await make_window(configured_settings(fake_openai))
    csv = tmp_path / "预算 2026.csv"
    csv.write_text("month,amount\nJan,100\nFeb,120\n", encoding="utf-8")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(csv))])
    window.composer.edit.dropEvent(
        QDropEvent(
            QPointF(5, 5), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier
        )
    )
    [chip] = window.composer.chips_list
    await until(lambda: chip.ready, what="file read")
    assert "预算 2026.csv" in chip.label.text() and chip.mark.text() == ""
    fake_openai.push(text_reply("Feb is higher."))
    await send(window, qtbot, "which month is higher?")
    assert window.composer.chips_list == []
    user = fake_openai.messages(0)[-1]["content"]
    assert user.startswith("which month is higher?\n\n[Attached file: 预算 2026.csv (text/csv") and "Feb,120" in user
    sent = window.chat.message_items()[0]
    widget = window.chat.message_widget(sent)
    assert widget.plain_text() == "which month is higher?"  # the words; the file is a chip, not pasted text
    from weclaw_desktop.ui.attachment_chips import ChipRow

    [row] = widget.findChildren(ChipRow)  # the sent message carries its file as a chip
    assert [c.attachment.name for c in row.chips if c.attachment] == ["预算 2026.csv"]
    # and still after the chat is opened again (read from the history)
    sid = window.controller.session_id
    await window.controller.new_session()
    await window.controller.open_session(sid)
    await window.controller.idle()
    restored = window.chat.message_widget(window.chat.message_items()[0])
    assert [c.attachment.name for r in restored.findChildren(ChipRow) for c in r.chips if c.attachment] == [
        "预算 2026.csv"
    ]


async def test_a_pasted_image_reaches_a_vision_model(make_window: Any, fake_openai: FakeOpenAI, qtbot: Any) -> None:
    settings = configured_settings(fake_openai)
    settings.provider.model = "gpt-4o"
    window = await make_window(settings)
    image = QImage(64, 48, QImage.Format.Format_RGB32)
    image.fill(QColor("#d03030"))
    mime = QMimeData()
    mime.setImageData(image)
    window.composer.edit.insertFromMimeData(mime)
    [chip] = window.composer.chips_list
    await until(lambda: chip.ready, what="image stored")
    assert chip.attachment is not None and chip.attachment.kind == "image"
    assert Path(chip.attachment.path).parent == window.runtime.attachment_dir()
    fake_openai.push(text_reply("A red rectangle."))
    await send(window, qtbot, "what is this?")
    assert image_parts(fake_openai.requests[0]) == 1


async def test_an_image_for_a_text_model_is_refused_and_nothing_is_lost(
    make_window: Any, fake_openai: FakeOpenAI, qtbot: Any
) -> None:
    settings = configured_settings(fake_openai)
    settings.provider.model = "deepseek-chat"
    window = await make_window(settings)
    image = QImage(8, 8, QImage.Format.Format_RGB32)
    image.fill(QColor("#3030d0"))
    mime = QMimeData()
    mime.setImageData(image)
    window.composer.edit.insertFromMimeData(mime)
    await until(lambda: window.composer.chips_list[0].ready)
    qtbot.keyClicks(window.composer.edit, "look at this")
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    await until(lambda: window.composer.edit.toPlainText() == "look at this", what="text given back")
    await until(lambda: len(window.composer.chips_list) == 1, what="image given back")
    assert fake_openai.requests == [] and window.controller.session_id == ""  # nothing sent, nothing stored
    assert any("cannot see images" in text for text in notice_texts(window))
    assert window.composer.caps.labels["vision"].isHidden()  # the model shows no "Vision" mark


def screen_manifest(folder: Path) -> Path:
    doc = json.loads(Path(__file__).resolve().parents[2].joinpath("tools.json").read_text(encoding="utf-8"))
    echo = tool_entry("EchoTool", ["say", "shout"], config={"prefix": ""})
    manifest = {"version": 1, "tools": {"screen": doc["tools"]["screen"], "echo": echo}, "profiles": {"full": ["*"]}}
    path = folder / "tools-screen.json"
    path.write_text(json.dumps(manifest), encoding="utf-8")
    return path


@pytest.mark.parametrize(("model", "sent"), [("gpt-4o", 1), ("deepseek-chat", 0)])
async def test_the_real_screenshot_reaches_a_vision_model_in_the_next_round(
    model: str, sent: int, qtbot: Any, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    """The real screen tool through the window's own Qt screen bridge (offscreen: a real, plain PNG)."""
    from uihelpers import TEST_KEY, close_windows, keep_loop

    from weclaw_desktop.app import create_runtime
    from weclaw_desktop.ui.boot import build_window

    settings = configured_settings(fake_openai)
    settings.provider.model = model
    settings.agent.approvals.rules["gui"]["medium"] = "allow"
    keep_loop()
    window = build_window(settings, tools_json=screen_manifest(tmp_path))
    try:
        create_runtime(window, api_key=TEST_KEY, logs=False)
        await window.controller.idle()
        window.show()
        fake_openai.push(tool_reply(call("screen_screenshot", {})), text_reply("I see your screen."))
        await send(window, qtbot, "take a screenshot and describe it")
        assert image_parts(fake_openai.requests[1]) == sent
        last = fake_openai.messages(1)[-1]
        assert last["role"] == "user"
        if not sent:
            assert "does not accept images" in last["content"]
    finally:
        await close_windows([window])


async def test_the_status_bar_counts_the_chats_tokens(make_window: Any, fake_openai: FakeOpenAI, qtbot: Any) -> None:
    window = await make_window(configured_settings(fake_openai))
    fake_openai.push(text_reply("no usage from this endpoint"))
    await send(window, qtbot, "hello")
    await until(lambda: window.tokens_label.text().startswith("≈"), what="estimated tokens")
    fake_openai.push(text_reply("x", usage={"prompt_tokens": 5000, "completion_tokens": 5000, "total_tokens": 10000}))
    await send(window, qtbot, "again")
    await until(lambda: "k tokens" in window.tokens_label.text())
    assert window.tokens_label.text().startswith("≈")  # part of it is still an estimate


def test_the_file_picker_opens_in_documents_or_home(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    composer = Composer()
    qtbot.addWidget(composer)
    composer._choose_files()
    assert composer.file_dialog.directory().absolutePath() == str(Path(start_folder()).resolve())
    assert start_folder() in (str(Path.home()), str(Path.home() / "Documents")) or Path(start_folder()).is_dir()
    composer.file_dialog.reject()


async def test_a_chat_opened_from_the_sidebar_search_shows_the_matching_message(
    make_window: Any, fake_openai: FakeOpenAI, qtbot: Any
) -> None:
    """Opening a search hit finds the words in the chat (find bar open, a match current); without a search the
    find bar stays closed."""
    window = await make_window(configured_settings(fake_openai))
    fake_openai.push(text_reply("Noted."), text_reply("The pineapple budget is 40."), text_reply("Other chat."))
    await send(window, qtbot, "hello")
    await send(window, qtbot, "what about the pineapple budget?")
    sid = window.controller.session_id
    await window.controller.new_session()
    await send(window, qtbot, "unrelated")
    assert not window.find_bar.isVisible()
    await window.controller.refresh_sessions("pineapple")
    window.sidebar.selected.emit(sid)
    await until(lambda: window.controller.session_id == sid and window.find_bar.isVisible(), what="the jump")
    bar = window.find_bar
    assert bar.edit.text() == "pineapple" and len(bar.matches) == 2
    assert "pineapple" in bar.matches[bar.current].item.text
