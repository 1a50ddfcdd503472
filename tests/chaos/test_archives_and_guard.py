"""Zip bombs that pass per-entry checks, headers that lie, and the loop guard's path spellings.

Archives, through the real dispatcher and the real tools.json: 300 entries of just under 1 MiB of zeros
each (about 340 KB) are refused before anything is written (total size against the archive's size on
disk); an entry whose headers declare less than it holds stops at the declared size and leaves nothing;
an archive bigger than the free space is refused first; an ordinary archive still extracts.

The loop guard, through a real turn: ``~/./x``, ``~//x``, the absolute path and ``x`` (relative to the
home folder) are one call, because the file tool declares ``path`` as a path (``PathStr``), so the third
spelling stops the turn.
"""

from __future__ import annotations

import io
import struct
import time
import zipfile
from pathlib import Path

import pytest
from chaos_support import small_disk
from fakeopenai import call, text_reply, tool_reply
from toolrun import Run

from weclaw_desktop.toolkit import ToolContext

MIB = 1024 * 1024


@pytest.fixture
def ctx(home: Path, tmp_path: Path) -> ToolContext:
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    return ToolContext(outputs_dir=outputs, data_dir=tmp_path / "data", db=None, allowed_roots=[home])


def _bomb(path: Path, entries: int = 300, size: int = MIB - 1) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for i in range(entries):
            zf.writestr(f"part{i:03d}.bin", b"\0" * size)
    return path


async def test_many_small_entries_of_zeros_are_refused_before_extraction(ctx, home: Path) -> None:
    """What must survive: the disk (nothing written) and a clear reason, fast."""
    bomb = _bomb(home / "bomb.zip")
    assert bomb.stat().st_size < 400_000
    run = Run(ctx)
    t0 = time.monotonic()
    res = await run("archive_unzip", archive="bomb.zip", destination="out")
    took = time.monotonic() - t0
    assert not res.succeeded
    assert (
        "which only zip bombs do" in res.output
        and "300 entries" in res.output
        and "Nothing was extracted" in res.output
    )
    assert not (home / "out").exists()
    assert took < 5, f"refusing took {took:.1f} s"


def _lying_zip(path: Path, real: bytes, declared: int) -> Path:
    """A zip whose entry declares ``declared`` bytes (central directory and local header) but holds ``real``."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("big.log", real)
    data = bytearray(buf.getvalue())
    local = data.find(b"PK\x03\x04")
    central = data.find(b"PK\x01\x02")
    struct.pack_into("<I", data, local + 22, declared)  # local header: uncompressed size
    struct.pack_into("<I", data, central + 24, declared)  # central directory: uncompressed size
    path.write_bytes(bytes(data))
    return path


async def test_an_entry_that_holds_more_than_it_declares_stops_at_the_declared_size(ctx, home: Path) -> None:
    """Headers lie: extraction never writes past what was declared and removes what it wrote."""
    real = (b"line of a log file that repeats\n" * 200_000)[: 6 * MIB]
    _lying_zip(home / "liar.zip", real, declared=10_000)
    run = Run(ctx)
    res = await run("archive_unzip", archive="liar.zip", destination="out")
    assert not res.succeeded
    assert "damaged" in res.output or "more than it declares" in res.output
    assert not (home / "out").exists()


async def test_an_ordinary_archive_still_extracts(ctx, home: Path) -> None:
    with zipfile.ZipFile(home / "docs.zip", "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("报告/说明.txt", "内容" * 1000)
        zf.writestr("data.csv", "a,b\n" * 50_000)
    res = await Run(ctx)("archive_unzip", archive="docs.zip", destination="out")
    assert res.succeeded, res.output
    assert (home / "out" / "报告" / "说明.txt").read_text() == "内容" * 1000


async def test_an_archive_larger_than_the_free_space_is_refused_first(ctx, home: Path, tmp_path: Path) -> None:
    """On a small disk (tmpfs, where it can be mounted): refused before writing, nothing left behind."""
    with small_disk(tmp_path / "disk", "2m") as disk:
        if disk is None:
            pytest.skip("cannot mount a tmpfs here")
        with zipfile.ZipFile(home / "big.zip", "w", compression=zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("a.txt", "abcdefghij" * 500_000)  # 5 MB, compresses about 500x
        ctx.allowed_roots.append(disk)
        res = await Run(ctx, config={"archive": {"max_ratio": 5000}})(
            "archive_unzip", archive="big.zip", destination=str(disk / "out")
        )
        assert not res.succeeded and "free" in res.output and "Nothing was extracted" in res.output
        assert not (disk / "out").exists()


async def test_the_loop_guard_sees_one_path_in_every_spelling(fake_openai, home: Path, tmp_path: Path) -> None:
    """What must stop: the third call of file_list on the same folder, spelled three different ways."""
    from weclaw_desktop.agent.runtime import AgentRuntime
    from weclaw_desktop.settings import Settings
    from weclaw_desktop.toolkit.base import Origin

    (home / "x").mkdir()
    settings = Settings()
    settings.provider.base_url, settings.provider.model, settings.provider.preset = fake_openai.base_url, "m", "custom"
    settings.agent.exposure = "all"
    rt = AgentRuntime.create(settings, api_key="sk-test", origin=Origin.CLI, logs=False)
    try:
        spellings = ["~/./x", "~//x", str(home / "x"), "x"]
        fake_openai.push(*[tool_reply(call("file_list", {"path": p}, id=f"l{i}")) for i, p in enumerate(spellings)])
        session = await rt.create_session()
        done = await rt.start_turn(session.id, "list x").wait()
        assert done.reason == "loop_guard", done.message
        assert "file_list" in done.message and len(fake_openai.requests) == 3
        calls = await rt.tool_calls(session.id)
        assert [c.status for c in calls] == ["success", "success", "cancelled"]

        # a different folder is a different call
        (home / "y").mkdir()
        fake_openai.push(
            tool_reply(call("file_list", {"path": "~/x"}, id="a")),
            tool_reply(call("file_list", {"path": "~/y"}, id="b")),
            text_reply("listed both"),
        )
        done = await rt.start_turn(session.id, "list x and y").wait()
        assert done.reason == "completed"
    finally:
        await rt.close()
