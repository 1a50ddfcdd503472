"""Real files in, what the model will read out: text in the encodings users have, CSV cut at a row with a visible
mark, a real PDF (written by Qt's PDF writer) and a real Word document (python-docx), images recognised by their
bytes (not their names), and files that cannot be read attached by path with the reason. Nothing here may raise
for a bad file except a file that is not there at all."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agent"))
from weclaw_agent_test_tools import tiny_png

from weclaw_desktop.attachments import MAX_IMAGE_BYTES, AttachmentError, prepare, prepare_all, store_image_bytes
from weclaw_desktop.attachments.compose import attachment_block, image_part, tool_images, user_text, with_images


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store"


def test_text_in_gbk_and_utf8_is_read(tmp_path: Path, store: Path) -> None:
    gbk = tmp_path / "报告.txt"
    gbk.write_bytes("第一季度销售额增长了百分之十二，主要来自华东地区。".encode("gb18030"))
    att = prepare(gbk, store_dir=store)
    assert att.kind == "text" and "华东地区" in att.text and not att.truncated
    code = tmp_path / "main.py"
    code.write_text("def f():\n    return 42\n", encoding="utf-8")
    assert prepare(code, store_dir=store).text.startswith("def f():")


def test_a_big_csv_is_cut_at_a_row_and_marked(tmp_path: Path, store: Path) -> None:
    path = tmp_path / "budget.csv"
    rows = ["month,amount"] + [f"2026-{i % 12 + 1:02d},{i * 17}" for i in range(20_000)]
    path.write_text("\n".join(rows), encoding="utf-8")
    att = prepare(path, store_dir=store, max_chars=5_000)
    assert (
        att.truncated
        and len(att.text) <= 5_000
        and att.text.endswith(("0", "1", "2", "3", "4", "5", "6", "7", "8", "9"))
    )
    assert att.text.splitlines()[-1].count(",") == 1  # a whole row, not half of one
    block = attachment_block(att)
    assert block.startswith("[Attached file: budget.csv (text/csv,")
    assert f"[Truncated: the first {len(att.text):,} of {att.chars:,} characters are included.]" in block


def test_the_total_of_one_message_is_capped_too(tmp_path: Path, store: Path) -> None:
    files = []
    for i in range(3):
        p = tmp_path / f"n{i}.md"
        p.write_text(("# note\n" + "word " * 2000) * 2, encoding="utf-8")
        files.append(p)
    atts = prepare_all(files, store_dir=store, max_chars=15_000, total_chars=30_000)
    assert sum(len(a.text) for a in atts) <= 30_000 and atts[-1].truncated


def test_a_real_pdf_gives_its_text_page_by_page(qapp: object, tmp_path: Path, store: Path) -> None:
    from PySide6.QtGui import QFont, QPageSize, QPainter, QPdfWriter

    path = tmp_path / "invoice.pdf"
    writer = QPdfWriter(str(path))
    writer.setPageSize(QPageSize(QPageSize.PageSizeId.A4))
    painter = QPainter(writer)
    # a font with a ToUnicode map for every glyph (whatever font an earlier test left as the default)
    painter.setFont(QFont("DejaVu Sans", 12))
    painter.drawText(200, 400, "Invoice 2026-117 total 342.50 EUR")
    writer.newPage()
    painter.drawText(200, 400, "Payment due within 30 days")
    painter.end()
    att = prepare(path, store_dir=store)
    assert att.kind == "text" and att.mime == "application/pdf"
    assert "--- page 1 ---" in att.text and "342.50" in att.text
    assert "--- page 2 ---" in att.text and "30 days" in att.text


def test_a_pdf_without_text_and_a_broken_pdf_say_so(qapp: object, tmp_path: Path, store: Path) -> None:
    from PySide6.QtGui import QPainter, QPdfWriter

    empty = tmp_path / "scan.pdf"
    writer = QPdfWriter(str(empty))
    painter = QPainter(writer)
    painter.drawRect(100, 100, 300, 300)  # a "scan": shapes, no text layer
    painter.end()
    att = prepare(empty, store_dir=store)
    assert att.kind == "file" and "no text layer" in att.note
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7\n" + b"\x00garbage" * 100)
    att = prepare(broken, store_dir=store)
    assert att.kind == "file" and att.note  # a reason, never a traceback
    assert "The file is at" in attachment_block(att)


def test_a_real_word_document_keeps_paragraphs_and_tables_in_order(tmp_path: Path, store: Path) -> None:
    import docx

    doc = docx.Document()
    doc.add_heading("会议纪要", level=1)
    doc.add_paragraph("Decisions of the Monday meeting.")
    table = doc.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Owner", "Task"
    table.cell(1, 0).text, table.cell(1, 1).text = "李雷", "Budget draft"
    doc.add_paragraph("Next meeting: Friday.")
    path = tmp_path / "minutes.docx"
    doc.save(str(path))
    att = prepare(path, store_dir=store)
    assert att.kind == "text"
    lines = att.text.splitlines()
    assert lines.index("会议纪要") < lines.index("Owner | Task") < lines.index("李雷 | Budget draft")
    assert lines[-1] == "Next meeting: Friday."


def test_a_zip_that_calls_itself_docx_is_refused_cleanly(tmp_path: Path, store: Path) -> None:
    import zipfile

    path = tmp_path / "fake.docx"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("hello.txt", "not word")
    att = prepare(path, store_dir=store)
    assert att.kind == "file" and "could not be read" in att.note


def test_images_are_recognised_by_their_bytes_and_kept_once(tmp_path: Path, store: Path) -> None:
    named_wrong = tmp_path / "photo.txt"
    named_wrong.write_bytes(tiny_png())
    att = prepare(named_wrong, store_dir=store)
    assert att.kind == "image" and att.mime == "image/png" and Path(att.path).parent == store
    again = store_image_bytes(tiny_png(), store_dir=store, name="pasted.png")
    assert again.path == att.path and len(list(store.iterdir())) == 1  # content-addressed
    part = image_part(tool_images([att.path])[0])
    assert part is not None and part["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
    fake = tmp_path / "fake.png"
    fake.write_text("not an image", encoding="utf-8")
    assert prepare(fake, store_dir=store).kind == "text"  # a .png that is text is text
    assert tool_images([str(fake), str(tmp_path / "missing.png")]) == []


def test_an_oversized_image_is_not_sent(tmp_path: Path, store: Path) -> None:
    big = tmp_path / "huge.png"
    big.write_bytes(tiny_png() + b"\x00" * (MAX_IMAGE_BYTES + 1))
    att = prepare(big, store_dir=store)
    assert att.kind == "file" and "MB" in att.note
    with pytest.raises(AttachmentError):
        store_image_bytes(big.read_bytes(), store_dir=store)


def test_binary_files_are_named_not_read_and_missing_files_refused(tmp_path: Path, store: Path) -> None:
    exe = tmp_path / "tool.bin"
    exe.write_bytes(b"\x7fELF" + bytes(range(256)) * 10)
    att = prepare(exe, store_dir=store)
    assert att.kind == "file" and "not a text document" in att.note
    with pytest.raises(AttachmentError):
        prepare(tmp_path / "nope.txt", store_dir=store)
    with pytest.raises(AttachmentError):
        prepare(tmp_path, store_dir=store)


def test_what_the_model_reads(tmp_path: Path, store: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("# Plan\n- buy milk", encoding="utf-8")
    atts = [prepare(note, store_dir=store), store_image_bytes(tiny_png(), store_dir=store, name="shot.png")]
    text = user_text("summarise this", atts)
    assert text.startswith("summarise this\n\n[Attached file: note.md") and "[End of note.md]" in text
    assert "[Attached image: shot.png]" in text
    shown = with_images(text, [], show=True)
    assert shown == text
    parts = with_images("look", tool_images([atts[1].path]), show=True)
    assert isinstance(parts, list) and [p["type"] for p in parts] == ["text", "image_url"]
    refused = with_images("look", tool_images([atts[1].path]), show=False, model="deepseek-chat")
    assert (
        refused
        == "look\n\n[Image "
        + Path(atts[1].path).name
        + " was not shown: the model deepseek-chat does not accept images.]"
    )
