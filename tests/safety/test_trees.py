"""Protected folders cannot leak through their parents, the Trash or WeClaw's own folders (#13 item 2).

Through the real registry and dispatcher (``toolrun.Run``) on a temporary home. The attacker's moves:
copy ``~/.config`` (which holds ``~/.config/gcloud``) and read the copy; delete or move ``~/.config`` and
read it back from the Trash; copy ``weclaw.db``, overwrite the log, trash the live database; and the same
through a symlink and odd spellings. What must survive: no protected byte is readable afterwards, the
protected folders are untouched, and the model is told what was refused or left out.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from toolrun import Run, tool_context

from weclaw_desktop.paths import app_paths
from weclaw_desktop.toolkit import ToolContext

SECRET = "refresh_token=1//0gSECRETgcloud"


@pytest.fixture
def world(home: Path, tmp_path: Path) -> dict[str, Path]:
    gcloud = home / ".config" / "gcloud"
    gcloud.mkdir(parents=True)
    (gcloud / "credentials.db").write_text(SECRET)
    (home / ".config" / "app.ini").write_text("theme=dark\n")
    trash = home / ".local" / "share" / "Trash" / "files" / "old-config"
    trash.mkdir(parents=True)
    (trash / "credentials.db").write_text(SECRET)
    paths = app_paths().ensure()
    paths.database.write_bytes(b"SQLite format 3\x00 chats")
    (paths.logs / "weclaw.log").write_text("log line\n")
    paths.outputs.mkdir(parents=True, exist_ok=True)
    (paths.outputs / "made.txt").write_text("a file a tool made\n")
    return {"gcloud": gcloud, "trash": trash, "db": paths.database, "log": paths.logs / "weclaw.log"}


@pytest.fixture
def run(home: Path, tmp_path: Path) -> Run:
    # the whole temp folder is allowed, so WeClaw's own folders (WECLAW_HOME) lie inside an allowed root:
    # only the protection stops the model, not "outside the allowed folders"
    ctx: ToolContext = tool_context(allowed_roots=[home, tmp_path])
    return Run(ctx)


async def test_copying_the_parent_leaves_the_protected_folder_out(run: Run, home: Path, world: dict) -> None:
    res = await run("file_copy", source="~/.config", destination="~/cfgcopy")
    assert res.succeeded, res.output
    assert (home / "cfgcopy" / "app.ini").read_text() == "theme=dark\n"
    assert not (home / "cfgcopy" / "gcloud").exists()
    assert "1 protected items" in res.output and "gcloud" in res.output
    assert res.data["skipped_protected"] == 1
    read = await run("file_read", path="~/cfgcopy/gcloud/credentials.db")
    assert not read.succeeded and SECRET not in read.output


@pytest.mark.parametrize("spelling", ["~/./.config/", "~/Documents/../.config", "{home}//.config", "cfg-link"])
async def test_other_spellings_and_symlinks_of_the_parent(run: Run, home: Path, world: dict, spelling: str) -> None:
    (home / "Documents").mkdir(exist_ok=True)
    (home / "cfg-link").symlink_to(home / ".config")
    res = await run("file_copy", source=spelling.format(home=home), destination="~/copy2")
    assert res.succeeded, res.output
    assert not (home / "copy2" / "gcloud").exists() and (home / "copy2" / "app.ini").exists()
    for verb in ("file_delete", "file_move"):
        extra = {"recursive": True} if verb == "file_delete" else {"destination": "~/moved"}
        key = "path" if verb == "file_delete" else "source"
        if spelling == "cfg-link":
            continue  # deleting or moving the link itself leaves the folder it points to alone
        refused = await run(verb, **{key: spelling.format(home=home)}, **extra)
        assert not refused.succeeded and "contains protected folders" in refused.output
    assert (world["gcloud"] / "credentials.db").read_text() == SECRET


async def test_deleting_the_parent_is_refused_and_the_trash_cannot_be_read(run: Run, home: Path, world: dict) -> None:
    res = await run("file_delete", path="~/.config", recursive=True)
    assert not res.succeeded and "cannot be deleted as a whole" in res.output
    assert (world["gcloud"] / "credentials.db").exists()
    moved = await run("file_move", source="~/.config", destination="~/elsewhere")
    assert not moved.succeeded and not (home / "elsewhere").exists()
    # what an earlier deletion put in the Trash cannot be read back, listed, copied or zipped
    for fn, args in [
        ("file_read", {"path": "~/.local/share/Trash/files/old-config/credentials.db"}),
        ("file_list", {"path": "~/.local/share/Trash/files"}),
        ("file_copy", {"source": "~/.local/share/Trash/files/old-config", "destination": "~/restored"}),
        ("archive_zip", {"sources": ["~/.local/share/Trash"]}),
    ]:
        got = await run(fn, **args)
        assert not got.succeeded, (fn, got.output)
        assert SECRET not in got.output
    search = await run("file_search", path="~", content="refresh_token", include_hidden=True)
    assert search.succeeded and search.data["count"] == 0


async def test_weclaw_own_folders_are_protected(run: Run, home: Path, world: dict, tmp_path: Path) -> None:
    paths = app_paths()
    for fn, args in [
        ("file_copy", {"source": str(world["db"]), "destination": "~/db-copy"}),
        ("file_read", {"path": str(world["db"])}),
        ("file_write", {"path": str(world["log"]), "content": "forged", "overwrite": True}),
        ("file_append", {"path": str(world["log"]), "content": "forged"}),
        ("file_delete", {"path": str(world["db"])}),
        ("file_move", {"source": str(world["db"]), "destination": "~/db-moved"}),
        ("file_read", {"path": str(paths.settings_file)}),
    ]:
        got = await run(fn, **args)
        assert not got.succeeded, (fn, got.output)
    assert world["db"].read_bytes().startswith(b"SQLite format 3") and world["log"].read_text() == "log line\n"
    assert not (home / "db-copy").exists()
    # the folder that holds WeClaw's data cannot be trashed or moved as a whole either
    gone = await run("file_delete", path=str(paths.data.parent), recursive=True)
    assert not gone.succeeded and world["db"].exists()
    # its outputs folder stays usable
    made = await run("file_read", path=str(paths.outputs / "made.txt"))
    assert made.succeeded, made.output


async def test_zipping_the_parent_leaves_protected_parts_out(run: Run, home: Path, world: dict) -> None:
    import zipfile

    res = await run("archive_zip", sources=["~/.config"], output="~/cfg.zip")
    assert res.succeeded, res.output
    names = zipfile.ZipFile(home / "cfg.zip").namelist()
    assert any(n.endswith("app.ini") for n in names) and not any("gcloud" in n for n in names)
    assert res.data["skipped"] >= 1


async def test_a_link_inside_a_copied_tree_stays_a_link_that_is_refused(run: Run, home: Path, world: dict) -> None:
    (home / "proj").mkdir()
    (home / "proj" / "readme.md").write_text("hi")
    os.symlink(world["gcloud"], home / "proj" / "sneaky")
    res = await run("file_copy", source="~/proj", destination="~/proj2")
    assert res.succeeded, res.output
    read = await run("file_read", path="~/proj2/sneaky/credentials.db")
    assert not read.succeeded and SECRET not in read.output
