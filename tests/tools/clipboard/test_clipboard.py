"""clipboard: read and write through the Dispatcher, with an in-memory clipboard bridge injected."""

from __future__ import annotations

from toolrun import Run
from tools.fake_bridges import MemoryClipboard

from weclaw_desktop.toolkit import ToolContext, ToolStatus


async def test_clipboard_write_then_read(run: Run) -> None:
    board = MemoryClipboard("before")
    run.registry.inject({"clipboard": board})
    res = await run("clipboard_write", text="复制的文字\nsecond line")
    assert res.succeeded, res.output
    assert board.writes == ["复制的文字\nsecond line"]
    assert res.data == {"chars": 17}
    res = await run("clipboard_read")
    assert res.succeeded
    assert res.output == "Clipboard text (17 characters):\n复制的文字\nsecond line"
    assert res.data == {"chars": 17, "lines": 2, "truncated": False}


async def test_clipboard_read_empty_and_long(ctx: ToolContext) -> None:
    run = Run(ctx, config={"clipboard": {"max_read_chars": 100}})
    board = MemoryClipboard("")
    run.registry.inject({"clipboard": board})
    res = await run("clipboard_read")
    assert res.succeeded and res.output.startswith("The clipboard is empty")
    board.text = "a" * 250
    res = await run("clipboard_read")
    assert res.truncated and res.data["truncated"] is True
    assert "[clipboard text cut at 100 of 250 characters]" in res.output
    assert "a" * 101 not in res.output


async def test_clipboard_write_bad_input_keeps_the_clipboard(run: Run) -> None:
    board = MemoryClipboard("keep me")
    run.registry.inject({"clipboard": board})
    res = await run("clipboard_write", text="")
    assert res.status is ToolStatus.ERROR and "text:" in res.output
    res = await run("clipboard_write")
    assert res.status is ToolStatus.ERROR and "text: Field required" in res.output
    res = await run("clipboard_read", text="x")
    assert res.status is ToolStatus.ERROR and "unknown argument 'text'" in res.output
    assert board.text == "keep me" and board.writes == []
