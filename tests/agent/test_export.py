"""Export and import of a chat: JSON round-trips everything (every branch, tool calls, attachments with the
image bytes, the chat's setup) into a new chat that sends the model exactly the same; Markdown and HTML show the
active branch with tool calls as readable blocks; a bad file is refused with a reason and writes nothing. The
CLI (``weclaw export``/``weclaw import``) does the same in-process.

What must survive: a chat moved between machines is the same chat; code or HTML inside messages never escapes
its block in the export; an import never touches an existing chat."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agent_support import make_settings
from fakeopenai import FakeOpenAI, call, text_reply, tool_reply
from test_cli import run_inproc
from test_conversation import turn
from weclaw_agent_test_tools import tiny_png

from weclaw_desktop.agent.context import model_messages
from weclaw_desktop.agent.export import export_html, export_json, export_markdown, import_json
from weclaw_desktop.agent.export.dump import ChatImportError, read_document
from weclaw_desktop.agent.runtime import AgentRuntime
from weclaw_desktop.attachments import prepare_all


async def build_chat(rt: AgentRuntime, fake: FakeOpenAI, tmp_path: Path) -> str:
    csv = tmp_path / "budget.csv"
    csv.write_text("month,amount\n2026-01,100\n2026-02,120\n", encoding="utf-8")
    png = tmp_path / "chart.png"
    png.write_bytes(tiny_png(rgb=(9, 9, 9)))
    atts = prepare_all([csv, png], store_dir=rt.attachment_dir())
    sid = (await rt.create_session("Budget review")).id
    fake.push(
        tool_reply(call("echo_say", {"text": "```not a fence``` <script>alert(1)</script>"})),
        text_reply("The budget grew **20%**.\n\n```python\nprint('``` inside')\n```"),
        text_reply("Old answer to the second question."),
        text_reply("New answer after the edit."),
    )
    await turn(rt, sid, "check the budget", attachments=atts)
    second, _ = await turn(rt, sid, "and February?")
    edited = await rt.edit(sid, second.run_id, "and February, exactly?")
    await edited.wait()
    await rt.set_instructions(sid, "Answer in short sentences.")
    return sid


def comparable(doc: dict[str, Any]) -> dict[str, Any]:
    """The export without what an import legitimately changes (ids, export time, where image copies live)."""
    doc = json.loads(json.dumps(doc))
    runs: dict[str, str] = {}
    for i, t in enumerate(doc["turns"]):
        runs[t["run_id"]] = f"run{i}"

    def fix(value: Any) -> Any:
        return runs.get(value, value) if isinstance(value, str) else value

    doc.pop("exported_at")
    doc["session"].pop("updated_at")
    doc["session"].pop("origin")
    doc["setup"].pop("title_source")
    for table in ("turns", "messages", "tool_calls", "attachments", "usage"):
        for row in doc[table]:
            for key in ("run_id", "parent_run"):
                if key in row:
                    row[key] = fix(row[key])
            row.pop("pid", None)
            if table == "attachments" and row.get("kind") == "image":
                row.pop("path")
    doc["choices"] = {fix(k): fix(v) for k, v in doc["choices"].items()}
    return doc


async def test_json_export_round_trips_through_import(
    fake_openai: FakeOpenAI, make_runtime: Any, tmp_path: Path
) -> None:
    rt = await make_runtime()
    sid = await build_chat(rt, fake_openai, tmp_path)
    doc = await export_json(rt.history, sid)
    assert doc["format"] == "weclaw-chat" and len(doc["turns"]) == 3 and doc["tool_calls"][0]["function"] == "echo_say"
    assert [a["name"] for a in doc["attachments"]] == ["budget.csv", "chart.png"] and doc["attachments"][1]["data"]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")

    other = tmp_path / "other-machine"
    new_sid = await import_json(rt.history, read_document(path), image_dir=other)
    assert new_sid != sid
    again = await export_json(rt.history, new_sid)
    assert comparable(again) == comparable(doc)
    # the model gets the same conversation from the imported chat (active branch, attachment text, image)
    before = await model_messages(rt.history, sid, max_chars=200_000, vision=True)
    after = await model_messages(rt.history, new_sid, max_chars=200_000, vision=True)
    assert after == before
    image_copy = [a for a in (await rt.history.attachments.by_run(new_sid)).values() for a in a if a.kind == "image"]
    copy = Path(image_copy[0].path)
    assert copy.parent == other and await asyncio.to_thread(copy.read_bytes) == tiny_png(rgb=(9, 9, 9))
    # the imported chat keeps its branches: the first version of the edited message is one page back
    infos = await rt.branch_infos(new_sid)
    assert sorted((i.edit_index, i.edit_count) for i in infos.values())[-1] == (2, 2)
    assert (await rt.chat_setup(new_sid)).instructions == "Answer in short sentences."


async def test_markdown_shows_the_active_branch_with_readable_tool_blocks(
    fake_openai: FakeOpenAI, make_runtime: Any, tmp_path: Path
) -> None:
    rt = await make_runtime()
    sid = await build_chat(rt, fake_openai, tmp_path)
    md = await export_markdown(rt.history, sid)
    assert md.startswith("# Budget review\n")
    assert "and February, exactly?" in md and "and February?\n" not in md  # only the active branch
    assert "> **Tool call** `echo_say` — success" in md
    assert "📎 budget.csv (text/csv" in md and "📎 chart.png (image/png" in md
    # the tool's output contains ``` : its fence is longer, so it cannot close the block early
    block = md[md.index("> **Tool call**") :]
    assert "> ````" in block


async def test_html_is_self_contained_and_escapes_message_html(
    fake_openai: FakeOpenAI, make_runtime: Any, tmp_path: Path
) -> None:
    rt = await make_runtime()
    sid = await build_chat(rt, fake_openai, tmp_path)
    page = await export_html(rt.history, sid)
    assert page.startswith("<!DOCTYPE html>") and "<title>Budget review</title>" in page
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert 'src="data:image/png;base64,' in page
    assert "http://" not in page and "https://" not in page  # nothing loaded from anywhere
    assert "<strong>20%</strong>" in page


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json at all", "is not valid JSON"),
        ('{"format": "something-else"}', "not a WeClaw chat export"),
        ('{"format": "weclaw-chat", "version": 99, "session": {}}', "written by a newer WeClaw"),
        (
            '{"format": "weclaw-chat", "version": 1, "session": {}, "turns": [],'
            ' "messages": [{"run_id": "x", "role": "user", "content": "hi", "created_at": 1}]}',
            "which the file does not have",
        ),
        ('{"format": "weclaw-chat", "version": 1, "session": {}, "messages": "lots"}', "'messages' is not a list"),
        (
            '{"format": "weclaw-chat", "version": 1, "session": {}, "turns": [{"run_id": "r"}],'
            ' "messages": [{"run_id": "r", "role": "system", "content": "x"}]}',
            "has the role 'system'",
        ),
        (
            '{"format": "weclaw-chat", "version": 1, "session": {}, "turns": [{"run_id": "r", "started_at": 1}],'
            ' "attachments": [{"run_id": "r", "kind": "image", "name": "x.png", "data": "%%%"}]}',
            "is damaged",
        ),
    ],
)
async def test_a_bad_file_is_refused_and_writes_nothing(
    content: str, message: str, make_runtime: Any, tmp_path: Path
) -> None:
    rt = await make_runtime()
    before = len(await rt.list_sessions())
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ChatImportError, match=message):
        await import_json(rt.history, read_document(path), image_dir=tmp_path / "img")
    assert len(await rt.list_sessions()) == before


async def test_weclaw_export_and_import_on_the_command_line(
    fake_openai: FakeOpenAI, tmp_path: Path, tools_json: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent_support import TEST_KEY

    rt = AgentRuntime.create(make_settings(fake_openai), tools_json=tools_json, api_key=TEST_KEY, logs=False)
    try:
        sid = await build_chat(rt, fake_openai, tmp_path)
    finally:
        await rt.close()
    code, out, _ = await run_inproc(["export", "latest", "--format", "md"], capsys)
    assert code == 0 and out.startswith("# Budget review") and "**Tool call** `echo_say`" in out
    target = tmp_path / "out.json"
    code, _, err = await run_inproc(["export", sid, "--format", "json", "-o", str(target)], capsys)
    assert code == 0 and str(target) in err
    code, out, _ = await run_inproc(["import", str(target)], capsys)
    new_sid = out.strip()
    assert code == 0 and len(new_sid) == 16 and new_sid != sid
    code, out, _ = await run_inproc(["export", new_sid, "--format", "html"], capsys)
    assert code == 0 and "Budget review" in out
    code, _, err = await run_inproc(["export", "nope", "--format", "md"], capsys)
    assert code == 2 and "no conversation with id nope" in err
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]", encoding="utf-8")
    code, _, err = await run_inproc(["import", str(bad)], capsys)
    assert code == 2 and "not a WeClaw chat export" in err
