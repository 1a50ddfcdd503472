"""The archive tool: zip several sources, unzip safely (zip-slip, bombs, no clobbering), list."""

from __future__ import annotations

import threading
import zipfile
from pathlib import Path

import pytest

from weclaw_desktop.toolkit import ToolContext, ToolError
from weclaw_desktop.tools import archive_ops as ops
from weclaw_desktop.tools.archive import ArchiveConfig, ArchiveTool, UnzipParams
from weclaw_desktop.tools.pathguard import PathGuard

pytestmark = pytest.mark.asyncio


def names(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as zf:
        return sorted(zf.namelist())


def make_zip(path: Path, entries: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return path


# --- zip ----------------------------------------------------------------------------------------------
async def test_zip_two_sources_into_one_archive(run, home: Path, rhome: Path) -> None:
    (home / "A" / "sub").mkdir(parents=True)
    (home / "A" / "sub" / "报告.txt").write_text("内容")
    (home / "A" / "a.txt").write_text("a")
    (home / "B.txt").write_text("b" * 1000)
    res = await run("archive_zip", sources=["A", "B.txt"], output="X.zip")
    assert res.succeeded, res.output
    assert res.files == [str(rhome / "X.zip")] and res.data["files"] == 3
    assert names(home / "X.zip") == ["A/", "A/a.txt", "A/sub/", "A/sub/报告.txt", "B.txt"]
    with zipfile.ZipFile(home / "X.zip") as zf:
        assert zf.read("A/sub/报告.txt").decode() == "内容"
        assert zf.getinfo("A/sub/报告.txt").flag_bits & 0x800  # UTF-8 names for other zip tools
    assert run.progress[-1][0] == 1.0


async def test_zip_defaults_to_outputs_and_never_overwrites(run, home: Path, outputs: Path) -> None:
    (home / "doc.txt").write_text("x")
    first = await run("archive_zip", sources=["doc.txt"])
    second = await run("archive_zip", sources=["doc.txt"])
    assert first.files == [str(outputs / "doc.zip")] and second.files == [str(outputs / "doc (2).zip")]
    clash = await run("archive_zip", sources=["doc.txt"], output=str(outputs / "doc.zip"))
    assert "already exists" in clash.output
    ok = await run("archive_zip", sources=["doc.txt"], output=str(outputs / "doc.zip"), overwrite=True)
    assert ok.succeeded and "moved to the trash" in ok.output


async def test_zip_leaves_out_protected_folders(run, home: Path, outputs: Path) -> None:
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("KEY")
    (home / "notes.txt").write_text("n")
    res = await run("archive_zip", sources=["~"], output=str(outputs / "home.zip"))
    assert res.succeeded and res.data["skipped"] == 1 and "1 protected items were left out" in res.output
    assert not any(".ssh" in n for n in names(outputs / "home.zip"))
    assert "home/notes.txt" in names(outputs / "home.zip")


async def test_zip_bad_inputs(run, home: Path, tmp_path: Path) -> None:
    (home / "f.txt").write_text("x")
    assert "Invalid arguments" in (await run("archive_zip", sources=[])).output
    assert "does not exist" in (await run("archive_zip", sources=["f.txt", "ghost"])).output
    assert "outside" in (await run("archive_zip", sources=[str(tmp_path)])).output
    (home / "dir.zip").mkdir()
    assert "is a folder" in (await run("archive_zip", sources=["f.txt"], output="dir.zip")).output


# --- unzip --------------------------------------------------------------------------------------------
async def test_unzip_to_outputs(run, home: Path, outputs: Path) -> None:
    make_zip(home / "pack.zip", {"top/x.txt": b"x", "top/中文/y.txt": "好".encode(), "z.bin": bytes(range(256))})
    res = await run("archive_unzip", archive="pack.zip")
    assert res.succeeded, res.output
    dest = outputs / "pack"
    assert res.data["destination"] == str(dest) and res.data["files"] == 3
    assert sorted(res.files) == sorted(str(dest / n) for n in ("top/x.txt", "top/中文/y.txt", "z.bin"))
    assert (dest / "top" / "中文" / "y.txt").read_text() == "好"
    assert (dest / "z.bin").read_bytes() == bytes(range(256))
    again = await run("archive_unzip", archive="pack.zip")
    assert again.data["destination"] == str(outputs / "pack (2)")


async def test_unzip_refuses_zip_slip(run, home: Path, tmp_path: Path) -> None:
    for entry in ("../../evil.txt", "/etc/evil.txt", "ok/../../evil.txt", "C:/evil.txt", "..\\evil.txt"):
        make_zip(home / "slip.zip", {"fine.txt": b"fine", entry: b"evil"})
        res = await run("archive_unzip", archive="slip.zip", destination="out")
        assert "unsafe" in res.output and "Nothing was extracted" in res.output, entry
        assert not (home / "out").exists() and not (tmp_path / "evil.txt").exists()
    listed = await run("archive_list", archive="slip.zip")
    assert "UNSAFE" in listed.output and listed.data["unsafe_entries"] == ["..\\evil.txt"]


async def test_unzip_refuses_symlink_escape(run, home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (home / "dest").mkdir()
    (home / "dest" / "link").symlink_to(outside, target_is_directory=True)
    make_zip(home / "l.zip", {"link/planted.txt": b"x"})
    res = await run("archive_unzip", archive="l.zip", destination="dest")
    assert "through a link" in res.output and not (outside / "planted.txt").exists()


async def test_unzip_refuses_denied_targets(run, home: Path) -> None:
    make_zip(home / "keys.zip", {".ssh/authorized_keys": b"ssh-rsa attacker"})
    res = await run("archive_unzip", archive="keys.zip", destination="~")
    assert "protected folder" in res.output and not (home / ".ssh").exists()


async def test_unzip_refuses_size_bombs(ctx: ToolContext, home: Path) -> None:
    make_zip(home / "bomb.zip", {"zeros.bin": b"\0" * (20 * 1024 * 1024)})
    tool = ArchiveTool()
    with pytest.raises(ToolError, match="only zip bombs do"):
        await tool.unzip(UnzipParams(archive="bomb.zip", destination="b1"), ctx)
    many = make_zip(home / "many.zip", {f"f{i}.txt": b"x" for i in range(20)})
    small = ArchiveTool(ArchiveConfig(max_entries=10, max_total_bytes=100))
    with pytest.raises(ToolError, match="20 entries, more than the limit of 10"):
        await small.unzip(UnzipParams(archive=str(many), destination="b2"), ctx)
    make_zip(home / "big.zip", {"a.txt": b"y" * 500})
    with pytest.raises(ToolError, match="unpack to 500 B, more than the limit"):
        await small.unzip(UnzipParams(archive="big.zip", destination="b3"), ctx)
    assert not any((home / d).exists() for d in ("b1", "b2", "b3"))


async def test_unzip_lying_sizes_leave_nothing(run, home: Path) -> None:
    path = make_zip(home / "lie.zip", {"a.txt": b"A" * 5000})
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("a.txt")
    real = info.file_size.to_bytes(4, "little")
    fake = (100).to_bytes(4, "little")
    assert data.count(real) >= 2
    path.write_bytes(bytes(data).replace(real, fake))  # local header and central directory now claim 100 bytes
    res = await run("archive_unzip", archive="lie.zip", destination="lie")
    assert not res.succeeded and "damaged" in res.output
    assert not (home / "lie").exists()


async def test_unzip_gbk_names_from_windows(run, home: Path, outputs: Path) -> None:
    path = make_zip(home / "win.zip", {"XXXX.txt": b"hello"})
    path.write_bytes(path.read_bytes().replace(b"XXXX.txt", "中文.txt".encode("gbk")))
    res = await run("archive_unzip", archive="win.zip")
    assert res.succeeded and (outputs / "win" / "中文.txt").read_text() == "hello"


async def test_unzip_does_not_clobber(run, home: Path) -> None:
    make_zip(home / "p.zip", {"a.txt": b"new"})
    (home / "d").mkdir()
    (home / "d" / "a.txt").write_text("precious")
    res = await run("archive_unzip", archive="p.zip", destination="d")
    assert "already exist" in res.output and (home / "d" / "a.txt").read_text() == "precious"
    ok = await run("archive_unzip", archive="p.zip", destination="d", overwrite=True)
    assert ok.succeeded and (home / "d" / "a.txt").read_text() == "new"
    assert (home / ".local/share/Trash/files/a.txt").read_text() == "precious"


async def test_unzip_bad_inputs(run, home: Path) -> None:
    (home / "text.zip").write_text("not a zip")
    (home / "r.rar").write_bytes(b"Rar!\x1a\x07\x00" + b"\0" * 20)
    assert "not a zip archive" in (await run("archive_unzip", archive="text.zip")).output
    assert "RAR" in (await run("archive_unzip", archive="r.rar")).output
    assert "does not exist" in (await run("archive_unzip", archive="none.zip")).output
    make_zip(home / "ok.zip", {"a": b"a"})
    (home / "file").write_text("")
    assert "must be a folder" in (await run("archive_unzip", archive="ok.zip", destination="file")).output


async def test_unzip_stopped_midway_removes_partial_output(ctx: ToolContext, home: Path) -> None:
    make_zip(home / "s.zip", {f"f{i}.txt": b"x" * 100 for i in range(10)})
    stop = threading.Event()
    calls = 0

    def progress(fraction: float | None, message: str) -> None:
        nonlocal calls
        calls += 1
        if calls == 3:
            stop.set()  # Stop pressed after the third file

    limits = ops.Limits(100, 10**9, 200)
    with pytest.raises(ops.Stopped):
        ops.extract_zip(home / "s.zip", home / "new", guard=PathGuard(ctx), limits=limits, overwrite=False,
                        stop=stop, progress=progress, trash=lambda p: None)  # fmt: skip
    assert not (home / "new").exists()


# --- list ---------------------------------------------------------------------------------------------
async def test_list(run, home: Path) -> None:
    make_zip(home / "l.zip", {"dir/": b"", "dir/a.txt": b"a" * 2048, "b.txt": b"b"})
    res = await run("archive_list", archive="l.zip")
    assert res.succeeded and res.data["entries"] == 3 and res.data["unpacked_bytes"] == 2049
    assert "dir/a.txt  2.0 KB" in res.output and res.data["unsafe_entries"] == []


async def test_list_bad_inputs(run, home: Path) -> None:
    (home / "t.zip").write_text("nope")
    assert "not a zip archive" in (await run("archive_list", archive="t.zip")).output
    assert "does not exist" in (await run("archive_list", archive="missing.zip")).output
    (home / "folder.zip").mkdir()
    assert "is a folder" in (await run("archive_list", archive="folder.zip")).output
