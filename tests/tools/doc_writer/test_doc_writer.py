"""doc_writer: Markdown and Word files from Markdown, outputs folder default, no silent overwrite."""

from __future__ import annotations

from pathlib import Path

import pytest
from docx import Document
from docx.oxml.ns import qn
from toolrun import direct

from weclaw_desktop.toolkit import AvailabilityContext, Dispatcher, ErrorKind, ToolCall, ToolStatus
from weclaw_desktop.toolkit.planner import plan
from weclaw_desktop.toolkit.policy import Policy

pytestmark = pytest.mark.asyncio

REPORT = """# 季度报告

这是**加粗**和*斜体*，还有`code`与[链接](https://example.com)。

- one
- two
  - nested **deep**

1. first
2. second

Between.

3. third
4. fourth

> a quote

```python
print("hi")
x = 1
```

| 名称 | 数量 |
|---|---|
| 苹果 | **3** |
| 梨 | 5 |

---

end ~~gone~~
"""


def num_id(paragraph) -> str:  # type: ignore[no-untyped-def]
    return paragraph._p.pPr.find(qn("w:numPr")).find(qn("w:numId")).get(qn("w:val"))


async def test_markdown_to_outputs_named_after_title(run, outputs: Path) -> None:
    res = await run("doc_writer_markdown", content="Some **text**.", title="会议纪要: 11/30")
    assert res.succeeded, res.output
    path = outputs / "会议纪要 11 30.md"
    assert res.files == [str(path)]
    assert path.read_text(encoding="utf-8") == "# 会议纪要: 11/30\n\nSome **text**.\n"
    second = await run("doc_writer_markdown", content="# Notes\nbody")
    assert second.files == [str(outputs / "Notes.md")]


async def test_markdown_never_overwrites_silently(run, home: Path) -> None:
    (home / "r.md").write_text("old")
    res = await run("doc_writer_markdown", content="new", path="r.md")
    assert "already exists" in res.output and (home / "r.md").read_text() == "old"
    ok = await run("doc_writer_markdown", content="new", path="r.md", overwrite=True)
    assert ok.data["replaced"] is True and (home / "r.md").read_text() == "new\n"
    assert (home / ".local/share/Trash/files/r.md").read_text() == "old"


async def test_markdown_bad_inputs(run, home: Path, tmp_path: Path) -> None:
    assert "Invalid arguments" in (await run("doc_writer_markdown", content="")).output
    assert "outside" in (await run("doc_writer_markdown", content="x", path=str(tmp_path / "x.md"))).output
    assert "does not end in .md" in (await run("doc_writer_markdown", content="x", path="a.docx")).output
    (home / "folder.md").mkdir()
    assert "is a folder" in (await run("doc_writer_markdown", content="x", path="folder.md")).output


async def test_docx_formatting(run, home: Path, rhome: Path) -> None:
    res = await run("doc_writer_docx", content=REPORT, path="report", title="Q3")
    assert res.succeeded, res.output
    assert res.files == [str(rhome / "report.docx")]
    doc = Document(str(home / "report.docx"))
    assert doc.core_properties.title == "Q3"
    paras = [p for p in doc.paragraphs if p.text]
    styles = [(p.style.name, p.text) for p in paras]
    assert styles[0] == ("Heading 1", "季度报告")
    assert ("List Bullet", "one") in styles and ("List Bullet 2", "nested deep") in styles
    assert ("Quote", "a quote") in styles
    body = paras[1]
    assert [(r.text, bool(r.bold), bool(r.italic)) for r in body.runs[:4]] == [
        ("这是", False, False),
        ("加粗", True, False),
        ("和", False, False),
        ("斜体", False, True),
    ]
    code_run = next(r for r in body.runs if r.text == "code")
    assert code_run.font.name == "Consolas"
    assert "(https://example.com)" in body.text
    code = next(p for p in paras if p.text.startswith("print"))
    assert code.text == 'print("hi")\nx = 1' and code.runs[0].font.name == "Consolas"
    numbered = [p for p in paras if p.style.name == "List Number"]
    assert [p.text for p in numbered] == ["first", "second", "third", "fourth"]
    assert num_id(numbered[0]) == num_id(numbered[1]) != num_id(numbered[2])  # the second list restarts
    table = doc.tables[0]
    assert [[c.text for c in row.cells] for row in table.rows] == [["名称", "数量"], ["苹果", "3"], ["梨", "5"]]
    assert table.rows[0].cells[0].paragraphs[0].runs[0].bold is True
    strike = next(r for p in paras for r in p.runs if r.text == "gone")
    assert strike.font.strike is True
    rfonts = doc.styles["Normal"].element.rPr.find(qn("w:rFonts"))
    assert rfonts.get(qn("w:eastAsia")) == "Microsoft YaHei"


async def test_docx_default_name_and_no_overwrite(run, outputs: Path) -> None:
    first = await run("doc_writer_docx", content="# 周报\n\ntext")
    second = await run("doc_writer_docx", content="# 周报\n\ntext")
    assert first.files == [str(outputs / "周报.docx")] and second.files == [str(outputs / "周报 (2).docx")]
    clash = await run("doc_writer_docx", content="x", path=str(outputs / "周报.docx"))
    assert "already exists" in clash.output


async def test_docx_bad_inputs(run, home: Path) -> None:
    assert "Invalid arguments" in (await run("doc_writer_docx", content="")).output
    assert "does not end in .docx" in (await run("doc_writer_docx", content="x", path="a.md")).output
    (home / ".ssh").mkdir()
    assert "refused" in (await run("doc_writer_docx", content="x", path="~/.ssh/x.docx")).output


async def test_docx_hidden_with_diagnostic_without_python_docx(run) -> None:
    missing = AvailabilityContext(module_available=lambda name: name != "docx")
    dispatcher = Dispatcher(run.registry, availability=lambda: missing)
    out = await direct(dispatcher, ToolCall("c1", "doc_writer_docx", '{"content": "x"}'), run.ctx)
    res = out.result
    assert res.status is ToolStatus.ERROR and "python-docx" in res.output and out.error is ErrorKind.UNAVAILABLE
    md = await direct(dispatcher, ToolCall("c2", "doc_writer_markdown", '{"content": "x"}'), run.ctx)
    assert md.succeeded
    offered = dispatcher.exposure.compute()  # a model round would not offer the hidden function at all
    assert "doc_writer_markdown" in offered.functions and "doc_writer_docx" not in offered.functions
    planned = plan(run.registry, Policy(), missing, tools=["doc_writer"])
    assert planned.visible == ["doc_writer"]
    assert list(planned.hidden_functions) == ["doc_writer_docx"]
    assert "python-docx" in str(planned.hidden_functions["doc_writer_docx"][0])
