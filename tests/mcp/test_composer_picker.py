"""The composer's MCP picker against our real SDK server (stdio): a resource becomes an attachment chip whose
text reaches the model like a file's, an image resource becomes an image attachment, and a server prompt (its
required argument asked first) fills the message box. A server that went away is said so, nothing attached."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from test_sdk_server import connected

from weclaw_desktop.mcp import McpManager
from weclaw_desktop.settings import McpServerSettings
from weclaw_desktop.ui.composer import Composer


async def test_resources_and_prompts_from_the_composer(
    qtbot: Any, manager: McpManager, sdk_settings: Callable[..., McpServerSettings], tmp_path: Any
) -> None:
    await connected(manager, sdk_settings(trusted=True))
    composer = Composer()
    qtbot.addWidget(composer)
    composer.attachment_dir = tmp_path / "att"
    composer.set_mcp_source(manager)
    composer._fill_attach_menu()
    labels = [a.text() for a in composer.attach_menu.actions()]
    assert labels[0] == "Files…" and "From an MCP server" in labels and "Prompts of MCP servers" in labels
    resources = dict(manager.resources())["sdk"], [r for s, r in manager.resources()]
    readme = next(r for r in resources[1] if r.name == "readme")
    logo = next(r for r in resources[1] if r.name == "logo")
    assert composer.mcp is not None
    [text] = await composer.mcp.attach("sdk", readme)
    assert text.kind == "text" and text.text == "Call lookup to look words up." and text.name == "readme"
    [image] = await composer.mcp.attach("sdk", logo)
    assert image.kind == "image" and image.mime == "image/png"
    assert [c.attachment for c in composer.chips_list] == [text, image]
    from weclaw_desktop.attachments.compose import user_text

    assert "Call lookup to look words up." in user_text("what does it say?", [text])
    # a prompt with a required argument: the dialog asks, then the message box holds the prompt's text
    [(server, prompt)] = manager.prompts()
    composer.mcp.use_prompt(server, prompt)
    dialog = composer.mcp.dialog
    assert dialog is not None and set(dialog.edits) == {"file", "focus"} and dialog.required == {"file"}
    dialog._ok()  # the required field is empty: nothing happens
    assert dialog.isVisible()
    got = await composer.mcp.fill_prompt(server, prompt, {"file": "app.py", "focus": "errors"})
    assert got == "Please review app.py. Focus on errors." and composer.edit.toPlainText() == got
    await manager.stop_all()
    import pytest

    with pytest.raises(RuntimeError, match="not connected any more"):
        await composer.mcp.attach("sdk", readme)


async def test_slash_lists_the_servers_prompts(
    qtbot: Any, manager: McpManager, sdk_settings: Callable[..., McpServerSettings], tmp_path: Any
) -> None:
    """Typing "/" in an empty box lists the prompts; letters narrow it, a miss or a space closes it; Enter picks
    (the arguments dialog opens, the "/" text is gone) and does NOT send the message; text that merely contains
    a slash never opens the list."""
    from PySide6.QtCore import Qt

    await connected(manager, sdk_settings(trusted=True))
    composer = Composer()
    qtbot.addWidget(composer)
    composer.show()
    composer.attachment_dir = tmp_path / "att"
    composer.set_mcp_source(manager)
    picker = composer.mcp
    assert picker is not None and list(picker.slash_items()) == ["/review"]
    sent: list[str] = []
    composer.send_requested.connect(lambda text, _att: sent.append(text))
    popup = picker.completer.popup()
    qtbot.keyClicks(composer.edit, "/re")
    assert popup.isVisible() and picker.completer.currentCompletion() == "/review"
    assert picker.completer.completionModel().index(0, 0).data() == "/review — Review a file · sdk"
    qtbot.keyClicks(composer.edit, "x")
    assert not popup.isVisible()
    composer.edit.clear()
    qtbot.keyClicks(composer.edit, "see a/b")
    assert not popup.isVisible()
    composer.edit.clear()
    qtbot.keyClicks(composer.edit, "/")
    assert popup.isVisible()
    popup.setCurrentIndex(picker.completer.completionModel().index(0, 0))
    qtbot.keyClick(popup, Qt.Key.Key_Return)
    assert sent == [] and composer.edit.toPlainText() == ""
    assert picker.dialog is not None and picker.dialog.windowTitle() == "review"
    picker.dialog.reject()
    await manager.stop_all()
