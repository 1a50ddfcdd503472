"""Storage faults are messages, not tracebacks: a damaged, a locked and a full database.

Cases: a garbage and a truncated ``weclaw.db`` at start (real process: moved aside and kept, a fresh
one created, a notice naming the kept file, the turn works); damage found while running (a marker makes
the next open check and move the file aside); the database held locked by a second process (real
process: a bounded wait, then one line naming the file and the holder; works once released); a full
disk (a small tmpfs as the data folder when this machine allows mounting one, otherwise an injected
ENOSPC at the storage layer): the turn ends with ``turn_done`` and says so, no logging traceback on
stderr, the next turn works once space is free. And the rule behind them: every SQLite file of the
package is opened in ``storage/db.py`` only.
"""

from __future__ import annotations

import ast
import asyncio
import os
import sqlite3
import sys
import time
from pathlib import Path

import pytest
from chaos_support import (
    REPO,
    TEST_KEY,
    AsciiFakeOpenAI,
    Chat,
    assert_clean_stderr,
    chat_env,
    database,
    rows,
    run_chat,
    small_disk,
)
from fakeopenai import call, text_reply, tool_reply

from weclaw_desktop.storage.db import Database
from weclaw_desktop.storage.faults import Fault, StorageError

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell commands and signals")


@pytest.fixture
async def fake() -> AsciiFakeOpenAI:
    server = AsciiFakeOpenAI()
    await server.start()
    yield server  # type: ignore[misc]
    await server.stop()


def _new_history_db(path: Path, messages: int = 0) -> None:
    import weclaw_desktop.agent.audit_sink
    import weclaw_desktop.agent.history  # noqa: F401

    db = Database.open(path)
    db.execute("INSERT INTO sessions(id, title, created_at, updated_at) VALUES('old', 'old chat', 0, 0)")
    with db.transaction() as conn:
        for i in range(messages):
            conn.execute(
                "INSERT INTO messages(session_id, role, content, created_at) VALUES('old', 'user', ?, 0)",
                (f"message {i} " + "x" * 900,),
            )
    db.close()
    conn2 = sqlite3.connect(path)
    conn2.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn2.close()


@posix_only
@pytest.mark.parametrize("damage", ["garbage", "truncated"])
async def test_a_damaged_database_at_start_is_kept_aside_and_a_fresh_one_used(
    fake, tmp_path: Path, damage: str
) -> None:
    """What must survive: the damaged file itself (byte for byte, named in the notice) and the user's
    ability to chat right away; never a traceback."""
    home = tmp_path / "data"
    db = database(home)
    db.parent.mkdir(parents=True)
    if damage == "garbage":
        db.write_bytes(os.urandom(64 * 1024))
    else:
        _new_history_db(db, messages=300)
        os.truncate(db, db.stat().st_size // 3)
    original = db.read_bytes()

    fake.push(text_reply("Hello again."))
    code, out, err = await run_chat(fake, chat_env(home), "hi", "--new")
    assert code == 0, err
    assert_clean_stderr(err)
    assert out.strip() == "Hello again."
    kept = list((db.parent / "damaged").glob("weclaw-*.db"))
    assert len(kept) == 1 and kept[0].read_bytes() == original
    notice = err.splitlines()[0]
    assert "weclaw.db was damaged" in notice and str(kept[0]) in notice and "new, empty database" in notice
    assert rows(home, "SELECT role, content FROM messages") == [("user", "hi"), ("assistant", "Hello again.")]


def test_damage_found_while_running_is_reported_and_repaired_at_the_next_open(tmp_path: Path) -> None:
    """A page damaged in the middle of the file passes the cheap header checks; the query that meets it
    raises a StorageError (not sqlite3's error), leaves a marker, and the next open checks the file,
    keeps it aside and starts fresh."""
    path = tmp_path / "weclaw.db"
    _new_history_db(path, messages=400)
    size = path.stat().st_size
    with open(path, "r+b") as fh:  # overwrite pages in the middle (not the header, not the size)
        fh.seek(size // 2)
        fh.write(os.urandom(8192))

    db = Database(path)
    with pytest.raises(StorageError) as caught:
        db.query("SELECT content FROM messages ORDER BY id")
        db.query("SELECT count(*) FROM messages WHERE content LIKE '%zzz%'")
    assert caught.value.kind is Fault.CORRUPT and "Restart WeClaw" in caught.value.message
    db.close()
    assert path.with_name("weclaw.db.damaged").exists()

    reopened = Database.open(path)
    assert reopened.recovered is not None and reopened.recovered.moved_to is not None
    assert reopened.recovered.moved_to.exists() and not path.with_name("weclaw.db.damaged").exists()
    assert reopened.query("SELECT count(*) FROM sessions")[0][0] == 0
    reopened.close()


_HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA locking_mode=EXCLUSIVE")
conn.execute("BEGIN EXCLUSIVE")
conn.execute("INSERT INTO sessions(id, title, created_at, updated_at) VALUES('held', '', 0, 0)")
print("locked", flush=True)
sys.stdin.read()  # hold the lock until the test closes our stdin
conn.execute("ROLLBACK")
"""


@posix_only
async def test_a_database_locked_by_another_program_waits_a_bounded_time_and_names_it(fake, tmp_path: Path) -> None:
    """What the user sees: after a few seconds, one line naming the busy file and the program holding it
    (no traceback, no 30 s hang); what is stored: nothing changed; once the program lets go, chat works."""
    home = tmp_path / "data"
    _new_history_db(database(home))
    holder = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _HOLDER,
        str(database(home)),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None
        assert (await asyncio.wait_for(holder.stdout.readline(), 20)).strip() == b"locked"
        t0 = time.monotonic()
        code, _out, err = await run_chat(fake, chat_env(home), "hi", "--new")
        waited = time.monotonic() - t0
        assert code == 1
        assert_clean_stderr(err)
        line = err.strip().splitlines()[-1]
        assert line.startswith(f"error: {database(home)} is busy: another program (python")
        assert f"pid {holder.pid}" in line and "waited 5 s" in line
        assert waited < 25, f"waited {waited:.1f} s"
        print(f"locked database: message after {waited:.1f} s")
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        await holder.wait()
    fake.push(text_reply("Now it works."))
    code, out, err = await run_chat(fake, chat_env(home), "hi", "--new")
    assert code == 0, err
    assert out.strip() == "Now it works."
    assert rows(home, "SELECT id FROM sessions WHERE id='held'") == []


async def test_a_lock_mid_turn_ends_the_turn_cleanly(tmp_path: Path, fake_openai, monkeypatch) -> None:
    """A lock that appears between two turns (another program opens the database): the turn ends with
    turn_done and the file's name, the session stays usable."""
    from weclaw_desktop.agent.runtime import AgentRuntime
    from weclaw_desktop.settings import Settings
    from weclaw_desktop.toolkit.base import Origin

    settings = Settings()
    settings.provider.base_url, settings.provider.model, settings.provider.preset = fake_openai.base_url, "m", "custom"
    rt = AgentRuntime.create(settings, api_key=TEST_KEY, origin=Origin.CLI, logs=False)
    try:
        rt.db.close()
        rt.db.busy_timeout_s = 0.3  # the bounded wait, short for the test
        session = await rt.create_session()
        holder = sqlite3.connect(rt.db.path, isolation_level=None, timeout=5)
        holder.execute("BEGIN EXCLUSIVE")
        events: list[object] = []
        done = await rt.start_turn(session.id, "hi", on_event=events.append).wait()
        holder.execute("ROLLBACK")
        holder.close()
        assert done.reason == "error" and "is busy" in done.message and str(rt.db.path) in done.message
        assert [e.kind for e in events if e.event_name() == "error_occurred"] == ["storage"]  # type: ignore[attr-defined]

        fake_openai.push(text_reply("fine"))
        done = await rt.start_turn(session.id, "again").wait()
        assert done.reason == "completed" and done.text == "fine"
    finally:
        await rt.close()


@posix_only
async def test_a_full_disk_ends_the_turn_cleanly_and_the_next_turn_works(fake, tmp_path: Path, monkeypatch) -> None:
    """What the user sees on a full disk: the turn ends (turn_done) with "the disk ... is full", nothing on
    stderr but that line (no logging tracebacks); what is stored stays consistent; once space is free the
    next turn works. A real small disk (tmpfs) when the machine allows mounting one, else injected ENOSPC."""
    with small_disk(tmp_path / "disk") as disk:
        if disk is None:
            pytest.skip("cannot mount a tmpfs here; test_a_full_disk_injected covers the case")
        home = disk / "home"
        filler = disk / "filler"
        fake.push(
            text_reply("ready"),
            tool_reply(call("shell_run", {"command": f"dd if=/dev/zero of={filler} bs=64k; echo filled"}, id="f1")),
            text_reply("space is back"),
        )
        code, _out, err = await run_chat(fake, chat_env(home, tmp_path), "hi", "--new")
        assert code == 0, err

        chat = await Chat.start(fake, chat_env(home, tmp_path), "fill the disk " + "x" * 4000)
        code, _out, err = await chat.finish(60)
        assert code == 1
        assert_clean_stderr(err)
        done = chat.events[-1]
        assert done["event"] == "turn_done" and done["reason"] == "error"
        assert "is full" in done["message"] and str(database(home)) in done["message"]
        assert [e["kind"] for e in chat.events if e["event"] == "error_occurred"] == ["storage"]
        assert err.strip().splitlines() == [done["message"]]

        filler.unlink()
        code, out, err = await run_chat(fake, chat_env(home, tmp_path), "and now?")
        assert code == 0, err
        assert_clean_stderr(err)
        assert out.strip() == "space is back"
        statuses = rows(home, "SELECT status FROM turns ORDER BY started_at")
        assert statuses == [("completed",), ("interrupted",), ("completed",)]
        assert rows(home, "SELECT call_id, status FROM tool_calls") == [("f1", "interrupted")]
        assert rows(home, "PRAGMA integrity_check") == [("ok",)]


async def test_a_full_disk_injected(fake, tmp_path: Path, monkeypatch) -> None:
    """The same case with ENOSPC injected where SQLite reports it (SQLITE_FULL on a write), for machines
    where no tmpfs can be mounted: the turn ends with turn_done and the message; the next turn works."""
    from weclaw_desktop.agent.runtime import AgentRuntime
    from weclaw_desktop.settings import Settings
    from weclaw_desktop.storage import db as dbmod
    from weclaw_desktop.toolkit.base import Origin

    full = {"on": False}
    original = dbmod._Connection.execute

    def execute(self, sql, parameters=(), /):  # type: ignore[no-untyped-def]
        if full["on"] and sql.lstrip().upper().startswith(("INSERT", "UPDATE")):
            exc = sqlite3.OperationalError("database or disk is full")
            exc.sqlite_errorcode = 13  # type: ignore[attr-defined]
            raise exc
        return original(self, sql, parameters)

    monkeypatch.setattr(dbmod._Connection, "execute", execute)
    settings = Settings()
    settings.provider.base_url, settings.provider.model, settings.provider.preset = fake.base_url, "m", "custom"
    rt = AgentRuntime.create(settings, api_key=TEST_KEY, origin=Origin.CLI, logs=False)
    try:
        session = await rt.create_session()
        fake.push(text_reply("saved"))  # the full disk stops the turn before it asks the model
        full["on"] = True
        events: list[object] = []
        done = await rt.start_turn(session.id, "hi", on_event=events.append).wait()
        assert done.reason == "error" and "is full" in done.message
        assert events[-1] is done and [e.kind for e in events if e.event_name() == "error_occurred"] == ["storage"]  # type: ignore[attr-defined]
        full["on"] = False
        done = await rt.start_turn(session.id, "again").wait()
        assert done.reason == "completed" and done.text == "saved"
    finally:
        await rt.close()


def test_every_sqlite_file_is_opened_in_storage_db() -> None:
    """The one place that maps SQLite faults: no other module of the package connects to a file."""
    package = REPO / "weclaw_desktop"
    offenders = []
    for path in package.rglob("*.py"):
        if path == package / "storage" / "db.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "connect":
                target = getattr(node.func, "value", None)
                if getattr(target, "id", "") == "sqlite3":
                    arg = node.args[0] if node.args else None
                    if not (isinstance(arg, ast.Constant) and arg.value == ":memory:"):
                        offenders.append(f"{path.relative_to(package)}:{node.lineno}")
    assert offenders == []
