"""The file tool through the real Dispatcher and tools.json: normal use, bad input, safety."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from weclaw_desktop.toolkit import ToolContext, ToolError, ToolStatus
from weclaw_desktop.tools.file import FileConfig, FileTool, SearchParams

pytestmark = pytest.mark.asyncio


def trash_files(home: Path) -> list[str]:
    folder = home / ".local" / "share" / "Trash" / "files"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


# --- read ---------------------------------------------------------------------------------------------
async def test_read_utf8(run, home: Path) -> None:
    (home / "a.txt").write_text("第一行\nline two\n", encoding="utf-8")
    res = await run("file_read", path="a.txt")
    assert res.succeeded, res.output
    assert res.output.endswith("第一行\nline two\n")
    assert res.data["encoding"] == "utf-8"
    assert res.data["truncated"] is False


async def test_read_gbk_and_utf16(run, home: Path) -> None:
    text = "这是一个测试文件。\n第二行：中文内容！\n"
    (home / "gbk.txt").write_bytes(text.encode("gbk"))
    (home / "u16.txt").write_bytes(text.encode("utf-16"))  # with BOM
    (home / "short.txt").write_bytes("你好，世界".encode("gbk"))
    gbk = await run("file_read", path="gbk.txt")
    assert gbk.data["encoding"] == "gb18030" and gbk.output.endswith(text)
    u16 = await run("file_read", path="u16.txt")
    assert u16.data["encoding"] == "utf-16" and u16.output.endswith(text)
    assert "\ufeff" not in u16.output
    short = await run("file_read", path="short.txt")
    assert short.output.endswith("你好，世界")


async def test_read_truncates_and_continues(ctx: ToolContext, home: Path) -> None:
    tool = FileTool(FileConfig(max_read_chars=1000))
    (home / "big.txt").write_text("".join(f"line {i:04d}\n" for i in range(1, 1001)))
    first = await tool.read(tool.action_defs()[0].params(path="big.txt"), ctx)
    assert first.truncated and "start_line=" in first.output
    last_line = first.data["lines"][1]
    assert first.output.split("\n")[-3] == f"line {last_line:04d}"
    nxt = await tool.read(tool.action_defs()[0].params(path="big.txt", start_line=last_line + 1, max_lines=2), ctx)
    assert nxt.output.split("\n")[1:3] == [f"line {last_line + 1:04d}", f"line {last_line + 2:04d}"]


async def test_read_binary_is_described_not_dumped(run, home: Path) -> None:
    (home / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 10)
    res = await run("file_read", path="pic.png")
    assert res.succeeded and res.data["binary"] is True and res.data["kind"] == "PNG image"
    assert "\x89" not in res.output and "\x00" not in res.output


async def test_read_bad_inputs(run, home: Path) -> None:
    (home / "folder").mkdir()
    (home / "one.txt").write_text("x\n")
    assert "does not exist" in (await run("file_read", path="nope.txt")).output
    assert "is a folder" in (await run("file_read", path="folder")).output
    assert "past the end" in (await run("file_read", path="one.txt", start_line=5)).output
    assert "Unknown text encoding" in (await run("file_read", path="one.txt", encoding="klingon")).output
    assert (await run("file_read", path="../../etc/passwd")).status is ToolStatus.ERROR


async def test_read_denied_folder(run, home: Path) -> None:
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY")
    res = await run("file_read", path="~/.ssh/id_rsa")
    assert not res.succeeded and "refused" in res.output and "PRIVATE" not in res.output


# --- write / append -----------------------------------------------------------------------------------
async def test_write_creates_and_refuses_overwrite(run, home: Path, rhome: Path) -> None:
    res = await run("file_write", path="notes/今天.txt", content="hello 世界")
    assert res.succeeded and res.files == [str(rhome / "notes" / "今天.txt")]
    assert (home / "notes" / "今天.txt").read_text(encoding="utf-8") == "hello 世界"
    again = await run("file_write", path="notes/今天.txt", content="other")
    assert not again.succeeded and "already exists" in again.output and "overwrite=true" in again.output
    assert (home / "notes" / "今天.txt").read_text(encoding="utf-8") == "hello 世界"  # kept


async def test_write_overwrite_keeps_old_version_in_trash(run, home: Path) -> None:
    (home / "r.txt").write_text("old")
    res = await run("file_write", path="r.txt", content="new", overwrite=True)
    assert res.succeeded and res.data["replaced"] is True
    assert (home / "r.txt").read_text() == "new"
    assert trash_files(home) == ["r.txt"]
    assert (home / ".local/share/Trash/files/r.txt").read_text() == "old"


async def test_write_bad_inputs(run, home: Path) -> None:
    (home / "d").mkdir()
    assert "is a folder" in (await run("file_write", path="d", content="x")).output
    bad_enc = await run("file_write", path="e.txt", content="😀", encoding="gbk")
    assert "cannot store" in bad_enc.output and not (home / "e.txt").exists()
    assert "Invalid arguments" in (await run("file_write", path="f.txt")).output  # content missing
    assert "Windows path" in (await run("file_write", path="C:\\x.txt", content="x")).output


async def test_append_keeps_encoding_and_newline(run, home: Path) -> None:
    (home / "log.txt").write_bytes("第一行".encode("gbk"))
    res = await run("file_append", path="log.txt", content="第二行\n")
    assert res.succeeded and res.data["encoding"] == "gb18030"
    assert (home / "log.txt").read_bytes().decode("gbk") == "第一行\n第二行\n"
    (home / "u.txt").write_bytes("a\n".encode("utf-16"))
    await run("file_append", path="u.txt", content="b\n")
    assert (home / "u.txt").read_bytes().decode("utf-16") == "a\nb\n"  # no second BOM
    created = await run("file_append", path="new.txt", content="x")
    assert created.data["created"] is True and (home / "new.txt").read_text() == "x"


async def test_append_bad_inputs(run, home: Path) -> None:
    (home / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    res = await run("file_append", path="img.png", content="x")
    assert "binary" in res.output and (home / "img.png").read_bytes() == b"\x89PNG\r\n\x1a\n\x00\x00\x00"
    (home / "dir").mkdir()
    assert "is a folder" in (await run("file_append", path="dir", content="x")).output
    assert "refused" in (await run("file_append", path=".aws/credentials", content="x")).output
    assert not (home / ".aws").exists()


# --- list / search / info -----------------------------------------------------------------------------
async def test_list(run, home: Path) -> None:
    (home / "b.txt").write_text("12345")
    (home / "A").mkdir()
    (home / ".hidden").write_text("")
    (home / ".ssh").mkdir()
    res = await run("file_list", path="~")
    assert res.succeeded
    lines = res.output.splitlines()
    assert lines[1].strip().startswith("A/") and lines[2].strip().startswith("b.txt  5 B")
    assert ".hidden" not in res.output and res.data["total"] == 2
    with_hidden = await run("file_list", path="~", include_hidden=True)
    assert ".hidden" in with_hidden.output and ".ssh" not in with_hidden.output
    assert "1 protected entries" in with_hidden.output
    pdfs = await run("file_list", path="~", pattern="*.pdf")
    assert pdfs.data["total"] == 0 and "nothing matches" in pdfs.output


async def test_list_bad_inputs(run, home: Path) -> None:
    (home / "f.txt").write_text("x")
    assert "is a file" in (await run("file_list", path="f.txt")).output
    assert "does not exist" in (await run("file_list", path="missing")).output
    assert "outside" in (await run("file_list", path="/")).output


async def test_search_by_name_and_content(run, home: Path) -> None:
    (home / "docs" / "sub").mkdir(parents=True)
    (home / "docs" / "合同2024.docx").write_bytes(b"PK\x03\x04")
    (home / "docs" / "sub" / "notes.txt").write_text("alpha\nthe budget is 42\n")
    (home / "docs" / "sub" / "gbk.txt").write_bytes("预算是四十二".encode("gbk"))
    (home / ".ssh").mkdir()
    (home / ".ssh" / "config").write_text("budget")
    by_name = await run("file_search", path="docs", name="合同")
    assert by_name.data["count"] == 1 and "合同2024.docx" in by_name.output
    by_content = await run("file_search", path="~", content="BUDGET", include_hidden=True)
    assert by_content.data["count"] == 1 and "notes.txt:2: the budget is 42" in by_content.output
    chinese = await run("file_search", path="~", content="预算")
    assert chinese.data["count"] == 1 and "gbk.txt:1" in chinese.output
    both = await run("file_search", path="~", name="*.txt", content=r"\d+", regex=True)
    assert both.data["count"] == 1
    assert run.progress and run.progress[-1] == (1.0, "1 found")


async def test_search_bounded(ctx: ToolContext, home: Path) -> None:
    for i in range(30):
        (home / f"f{i:02d}.txt").write_text("x")
    tool = FileTool(FileConfig(max_search_files=100))
    tool.config.max_search_files = 10
    res = await tool.search(SearchParams(path="~", name="*.txt"), ctx)
    assert res.data["files_scanned"] == 10 and res.data["complete"] is False and "stopped after 10 files" in res.output
    few = await tool.search(SearchParams(path="~", name="*.txt", max_results=3), ctx)
    assert few.data["count"] == 3 and "stopped at 3 results" in few.output


async def test_search_bad_inputs(run, home: Path) -> None:
    (home / "f.txt").write_text("x")
    assert "Give a name pattern" in (await run("file_search", path="~")).output
    assert "regular expression" in (await run("file_search", path="~", content="(", regex=True)).output
    assert "search needs a folder" in (await run("file_search", path="f.txt", name="*")).output


async def test_info(run, home: Path) -> None:
    (home / "d" / "e").mkdir(parents=True)
    (home / "d" / "x.txt").write_text("hello")
    (home / "d" / "e" / "y.bin").write_bytes(b"\x00" * 100)
    res = await run("file_info", path="d")
    assert res.data["type"] == "folder" and res.data["files"] == 2 and res.data["size"] == 105
    f = await run("file_info", path="d/x.txt")
    assert f.data["type"] == "file" and f.data["size"] == 5 and f.data["encoding"] == "utf-8"
    assert "does not exist" in (await run("file_info", path="zzz")).output
    assert "refused" in (await run("file_info", path="~/.gnupg")).output


# --- copy / move / delete / mkdir ---------------------------------------------------------------------
async def test_copy_file_and_folder(run, home: Path) -> None:
    (home / "src" / "in").mkdir(parents=True)
    (home / "src" / "a.txt").write_text("A")
    (home / "src" / "in" / "b.txt").write_text("B")
    (home / "dest").mkdir()
    res = await run("file_copy", source="src/a.txt", destination="dest")
    assert res.succeeded and (home / "dest" / "a.txt").read_text() == "A"
    tree = await run("file_copy", source="src", destination="copy_of_src")
    assert tree.data["files"] == 2 and (home / "copy_of_src" / "in" / "b.txt").read_text() == "B"
    assert any(f == 1.0 for f, _ in run.progress)


async def test_copy_does_not_clobber(run, home: Path) -> None:
    (home / "a.txt").write_text("new")
    (home / "b.txt").write_text("precious")
    res = await run("file_copy", source="a.txt", destination="b.txt")
    assert "already exists" in res.output and (home / "b.txt").read_text() == "precious"
    ok = await run("file_copy", source="a.txt", destination="b.txt", overwrite=True)
    assert ok.data["replaced"] is True and (home / "b.txt").read_text() == "new"
    assert (home / ".local/share/Trash/files/b.txt").read_text() == "precious"
    (home / "d1").mkdir()
    (home / "d2" / "d1").mkdir(parents=True)
    merge = await run("file_copy", source="d1", destination="d2", overwrite=True)
    assert "never merged" in merge.output
    assert "inside itself" in (await run("file_copy", source="d1", destination="d1/sub")).output
    assert "same" in (await run("file_copy", source="a.txt", destination="a.txt")).output
    assert "does not exist" in (await run("file_copy", source="a.txt", destination="no/such/dir/x.txt")).output


async def test_move(run, home: Path) -> None:
    (home / "a.txt").write_text("A")
    (home / "box").mkdir()
    res = await run("file_move", source="a.txt", destination="box")
    assert res.succeeded and not (home / "a.txt").exists() and (home / "box" / "a.txt").read_text() == "A"
    renamed = await run("file_move", source="box", destination="crate")
    assert renamed.succeeded and (home / "crate" / "a.txt").exists()


async def test_move_bad_inputs(run, home: Path, tmp_path: Path) -> None:
    (home / "a.txt").write_text("A")
    (home / "b.txt").write_text("B")
    clash = await run("file_move", source="a.txt", destination="b.txt")
    assert "already exists" in clash.output and (home / "a.txt").exists() and (home / "b.txt").read_text() == "B"
    out = await run("file_move", source="a.txt", destination=str(tmp_path / "outside.txt"))
    assert "outside" in out.output and (home / "a.txt").exists()
    root = await run("file_move", source="~", destination="x")
    assert "allowed root folder itself" in root.output
    into_ssh = await run("file_move", source="a.txt", destination="~/.ssh/authorized_keys")
    assert "refused" in into_ssh.output and (home / "a.txt").exists()


async def test_delete_goes_to_trash(run, home: Path) -> None:
    (home / "old.txt").write_text("bye")
    res = await run("file_delete", path="old.txt")
    assert res.succeeded and "restore" in res.output and not (home / "old.txt").exists()
    assert trash_files(home) == ["old.txt"]
    (home / "full" / "x").mkdir(parents=True)
    (home / "full" / "x" / "y.txt").write_text("y")
    refused = await run("file_delete", path="full")
    assert "recursive=true" in refused.output and (home / "full" / "x" / "y.txt").exists()
    ok = await run("file_delete", path="full", recursive=True)
    assert ok.succeeded and not (home / "full").exists() and "full" in trash_files(home)


async def test_delete_bad_inputs(run, home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    (home / "link").symlink_to(outside / "keep.txt")
    assert "does not exist" in (await run("file_delete", path="ghost.txt")).output
    assert "allowed root folder itself" in (await run("file_delete", path="~", recursive=True)).output
    assert "outside" in (await run("file_delete", path=str(outside / "keep.txt"))).output
    # deleting a link removes the link, never the file it points to
    res = await run("file_delete", path="link")
    assert res.succeeded and not (home / "link").is_symlink() and (outside / "keep.txt").read_text() == "keep"


async def test_mkdir(run, home: Path, rhome: Path) -> None:
    res = await run("file_mkdir", path="a/b/c")
    assert res.data == {"path": str(rhome / "a/b/c"), "created": True} and (home / "a/b/c").is_dir()
    again = await run("file_mkdir", path="a/b/c")
    assert again.succeeded and again.data["created"] is False
    (home / "f").write_text("")
    assert "is a file" in (await run("file_mkdir", path="f")).output
    assert "refused" in (await run("file_mkdir", path=".ssh")).output and not (home / ".ssh").exists()


async def test_search_stops_when_cancelled(ctx: ToolContext, home: Path) -> None:
    import threading

    from weclaw_desktop.tools.file_search import SearchSpec, run_search
    from weclaw_desktop.tools.pathguard import PathGuard

    for i in range(50):
        (home / f"{i}.txt").write_text("hay")
    spec = SearchSpec(home, "*.txt", None, False, False, False, 1000, 1000, 10.0, 1000)
    stop = threading.Event()
    seen: list[str] = []

    def progress(fraction: float | None, message: str) -> None:
        seen.append(message)
        stop.set()  # the user pressed Stop while the walk was running

    stop.set()
    early = run_search(spec, PathGuard(ctx), stop, progress)
    assert early.stopped_by == "cancelled" and early.files_scanned == 0
    # and a cancelled tool call re-raises CancelledError
    tool = FileTool()
    task = asyncio.create_task(tool.search(SearchParams(path="~", content="zzz-never"), ctx))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_read_one_huge_line_is_capped(ctx: ToolContext, home: Path) -> None:
    (home / "min.js").write_text("x" * 50_000 + "\nsecond\n")
    tool = FileTool(FileConfig(max_read_chars=1000))
    res = await tool.read(tool.action_defs()[0].params(path="min.js"), ctx)
    assert res.truncated and res.data["lines"] == [1, 1] and res.output.count("x") == 1000
    nxt = await tool.read(tool.action_defs()[0].params(path="min.js", start_line=2), ctx)
    assert nxt.output.endswith("second\n") and not nxt.truncated
    (home / "three.txt").write_text("a\nb\nc")  # no newline at the end
    with pytest.raises(ToolError, match="has only 3 lines"):
        await tool.read(tool.action_defs()[0].params(path="three.txt", start_line=9), ctx)
