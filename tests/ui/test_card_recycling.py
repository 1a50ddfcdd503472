"""Tool cards are recycled while scrolling: a card rebound to another call shows that call exactly as a card
made fresh for it would, and nothing of the call it showed before.

What must survive: after a card showed a shell call (monospace output, arguments unfolded, "Show full
output" open, two produced files, an "could not open" line) and is rebound to a failed call of another tool
(folded, no files) — and back — every visible text, every visible part, the result's font, the colours
and the height equal those of a fresh card for the same item; the file buttons act on the new call's files;
a failure reported for the old call after the rebind does not appear on the card now showing the new one.
Cards come from the real tools.json registry (the shell tool is monospace) and the real theme, offscreen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fakeopenai import FakeOpenAI
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QPushButton, QWidget
from uihelpers import configured_settings, until

from weclaw_desktop.i18n import Text
from weclaw_desktop.paths import tools_json_path
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.ui.chat.items import CallItem
from weclaw_desktop.ui.tool_board import CallInfo
from weclaw_desktop.ui.tool_card import CardActions, ToolCallCard

WIDTH = 640


def _registry() -> ToolRegistry:
    return ToolRegistry.from_path(tools_json_path())


def _shell_item() -> CallItem:
    output = "\n".join(f"line {i}: total {i * 7}" for i in range(40))
    call = CallInfo(
        call_id="c-shell",
        function="shell_run",
        tool="shell",
        action="run",
        arguments='{"command": "ls -la /tmp"}',
        status="success",
        duration_ms=4000.0,
        output=output,
        files=["/tmp/out/report.csv", "/tmp/out/chart.png"],
    )
    item = CallItem(call=call)
    item.expanded = True
    item.full_output = True
    item.data["feedback"] = Text("card.open_failed", name="report.csv")
    return item


def _failed_item(registry: ToolRegistry) -> CallItem:
    tool = next(t for t in registry.tool_names() if t != "shell" and not registry.spec(t).display.monospace)
    action = next(iter(registry.spec(tool).actions))
    call = CallInfo(
        call_id="c-other",
        function=f"{tool}_{action}",
        tool=tool,
        action=action,
        arguments='{"x": 1}',
        status="error",
        duration_ms=120.0,
        error="the file was locked",
    )
    item = CallItem(call=call)
    item.expanded = True  # its arguments unfolded: they must be its own
    return item


def _running_item() -> CallItem:
    """A call still running (folded, no output yet, no files)."""
    call = CallInfo(call_id="c-run", function="shell_run", tool="shell", action="run", arguments="{}", status="running")
    return CallItem(call=call)


def _visible(card: ToolCallCard) -> dict[str, Any]:
    """What the user sees of a card: every visible label and button text, the output box, the fonts, colours."""
    shown = [w for w in card.findChildren(QWidget) if w.isVisibleTo(card)]
    labels = sorted(
        (w.objectName(), w.full_text() if hasattr(w, "full_text") else w.text())
        for w in shown
        if isinstance(w, QLabel) and (w.text() or hasattr(w, "full_text"))
    )
    buttons = sorted(w.text() for w in shown if isinstance(w, QPushButton))
    boxes = [w.toPlainText() for w in shown if isinstance(w, QPlainTextEdit)]
    role = QPalette.ColorRole.WindowText
    return {
        "parts": sorted(f"{type(w).__name__}#{w.objectName()}" for w in shown),
        "labels": labels,
        "buttons": buttons,
        "boxes": boxes,
        "arguments shown": card.toggle.isChecked(),
        "result font": card.result.font().family(),
        "result mono": card.result.font().styleHint(),
        "status colour": card.status.palette().color(role).name(),
        "result colour": card.result.palette().color(role).name(),
        "why colour": card.why.palette().color(role).name(),
        "height": card.heightForWidth(WIDTH),
    }


def _fresh(item: CallItem, registry: ToolRegistry, actions: CardActions, host: QWidget) -> ToolCallCard:
    card = ToolCallCard(item.call, registry, actions, host, item=item)
    card.resize(WIDTH, card.heightForWidth(WIDTH))
    card.show()
    return card


async def test_a_rebound_card_shows_only_its_new_call(qtbot: Any) -> None:
    registry = _registry()
    opened: list[Path] = []
    reports: list[Any] = []

    def open_path(path: Path, report: Any) -> None:
        opened.append(path)
        reports.append(report)

    actions = CardActions(open_path=open_path, reveal_path=lambda p, r: None)
    host = QWidget()
    qtbot.addWidget(host)
    host.resize(WIDTH + 20, 1200)
    host.show()
    shell, failed = _shell_item(), _failed_item(registry)
    card = _fresh(shell, registry, actions, host)
    before = _visible(card)
    assert before["boxes"] and "line 39" in before["boxes"][0], "the full output is open"
    assert ("", "report.csv") in before["labels"] and ("", "chart.png") in before["labels"]
    assert card.result.font().styleHint() == QFont.StyleHint.Monospace, "shell output is monospace"
    assert before["arguments shown"] and any("ls -la" in t for _, t in before["labels"]), "arguments unfolded"

    opened_rows = [r for r in card._file_rows if r.isVisibleTo(card)]
    opened_rows[0].findChildren(QPushButton, "OpenFile")[0].click()  # the system opener answers later
    assert opened == [Path("/tmp/out/report.csv")]
    late_report = reports[-1]

    card.bind(failed)  # the column dropped it and the chat gave it to another call
    card.resize(WIDTH, card.heightForWidth(WIDTH))
    fresh_failed = _fresh(failed, registry, actions, host)
    assert _visible(card) == _visible(fresh_failed), "a rebound card differs from a fresh one"
    texts = " ".join(t for _, t in _visible(card)["labels"])
    assert "report.csv" not in texts and "ls -la" not in texts and "line 3" not in texts
    assert card.item is failed and card.call is failed.call

    # the old call's file could not be opened, reported after its card was rebound: not on this card
    late_report(Text("card.open_missing", name="report.csv"))
    assert not (card._feedback is not None and card._feedback.isVisibleTo(card))
    assert shell.data["feedback"] == Text("card.open_missing", name="report.csv"), "kept on its own item"
    shell.data["feedback"] = Text("card.open_failed", name="report.csv")

    card.bind(shell)  # and back: a card that showed the failed call shows the shell call again, whole
    card.resize(WIDTH, card.heightForWidth(WIDTH))
    fresh_shell = _fresh(shell, registry, actions, host)
    assert _visible(card) == _visible(fresh_shell)
    assert _visible(card) == before
    rows = [r for r in card._file_rows if r.isVisibleTo(card)]
    assert [r.path.name for r in rows] == ["report.csv", "chart.png"]
    rows[1].findChildren(QPushButton, "OpenFile")[0].click()
    assert opened[-1] == Path("/tmp/out/chart.png"), "a reused file row acts on the file it shows now"

    other = _shell_item()  # another call that produced other files: the rows show (and open) those
    other.call.files = ["/tmp/elsewhere/other.txt"]
    other.data.clear()
    card.bind(other)
    card.resize(WIDTH, card.heightForWidth(WIDTH))
    assert _visible(card) == _visible(_fresh(other, registry, actions, host))
    assert [r.path.name for r in card._file_rows if r.isVisibleTo(card)] == ["other.txt"]
    assert ("", "other.txt") in _visible(card)["labels"] and ("", "chart.png") not in _visible(card)["labels"]

    running = _running_item()  # then a call still running: no files, no output, the busy bar
    card.bind(running)
    card.resize(WIDTH, card.heightForWidth(WIDTH))
    fresh_running = _fresh(running, registry, actions, host)
    assert _visible(card) == _visible(fresh_running)
    assert not any(r.isVisibleTo(card) for r in card._file_rows)


async def test_scrolling_a_chat_of_cards_rebinds_them_and_each_shows_its_own_call(
    make_window: Any, fake_openai: FakeOpenAI
) -> None:
    """Scrolled from the end to the top, every card on screen shows its own call (texts, parts, height as a
    fresh card), and dropped cards were rebound rather than made again."""
    window = await make_window(configured_settings(fake_openai))
    chat = window.chat
    registry = chat.registry
    tools = registry.tool_names()
    for i in range(120):
        chat.add_message("user", f"question {i}")
        tool = tools[i % len(tools)]
        action = next(iter(registry.spec(tool).actions))
        status = ("success", "error", "denied", "cancelled")[i % 4]
        info = CallInfo(
            call_id=f"c{i}",
            function=f"{tool}_{action}",
            tool=tool,
            action=action,
            arguments=f'{{"n": {i}}}',
            status=status,
            duration_ms=10.0 * i,
            output=f"output of call {i}\n" * (1 + i % 12),
            error=f"error of call {i}" if status == "error" else "",
            files=[f"/tmp/cards/file-{i}.txt"] if i % 3 == 0 else [],
        )
        item = chat.add_card(info)
        item.expanded = i % 5 == 0
        chat.add_message("assistant", f"answer {i}")
    await until(lambda: chat.at_end and chat.live_widgets(), what="the end shown")
    bar = chat.verticalScrollBar()
    rebound0 = chat.cards_rebound
    host = QWidget()
    checked = 0
    while True:
        await until(lambda: not chat._idle.isActive(), what="idle")
        for item, widget in chat.live_widgets():
            if not isinstance(widget, ToolCallCard) or widget.isHidden():
                continue
            assert isinstance(item, CallItem) and widget.item is item and widget.call is item.call
            fresh = ToolCallCard(item.call, registry, chat.card_actions, host, item=item)
            width = widget.width()
            fresh.resize(width, fresh.heightForWidth(width))
            got, want = _visible(widget), _visible(fresh)
            got.pop("height"), want.pop("height")
            assert got == want, f"card of {item.call.call_id} shows something else"
            assert abs(widget.heightForWidth(width) - fresh.heightForWidth(width)) <= 2
            fresh.deleteLater()
            checked += 1
        if bar.value() == 0:
            break
        bar.setValue(bar.value() - chat.viewport().height() // 2)
    host.deleteLater()
    assert checked > 100
    assert chat.cards_rebound > rebound0, "dropped cards were rebound"
