"""pathguard: roots, denied folders, `..` and symlink escapes, Windows paths."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from weclaw_desktop.paths import app_paths
from weclaw_desktop.toolkit import ToolContext, ToolError
from weclaw_desktop.tools.pathguard import PathGuard, resolve_user_path


def test_relative_and_tilde_paths_are_in_home(ctx: ToolContext, home: Path) -> None:
    assert resolve_user_path("notes.txt", ctx) == home.resolve() / "notes.txt"
    assert resolve_user_path("~/a/b.txt", ctx) == home.resolve() / "a" / "b.txt"
    assert resolve_user_path(f"  '{home}/x'  ", ctx) == home.resolve() / "x"
    assert resolve_user_path("a/../c.txt", ctx) == home.resolve() / "c.txt"


def test_relative_paths_use_first_root_when_home_is_not_allowed(tmp_path: Path, home: Path) -> None:
    other = tmp_path / "work"
    other.mkdir()
    ctx = ToolContext(outputs_dir=tmp_path / "out", data_dir=tmp_path / "data", db=None, allowed_roots=[other])
    assert resolve_user_path("x.txt", ctx) == other.resolve() / "x.txt"
    with pytest.raises(ToolError, match="outside the folders"):
        resolve_user_path(str(home / "x.txt"), ctx)


def test_dotdot_escape_refused(ctx: ToolContext, home: Path) -> None:
    with pytest.raises(ToolError, match="outside the folders WeClaw may use"):
        resolve_user_path("../../etc/passwd", ctx)
    with pytest.raises(ToolError, match="outside"):
        resolve_user_path("/etc/passwd", ctx)


def test_symlink_out_of_root_refused(ctx: ToolContext, home: Path, tmp_path: Path) -> None:
    secret_dir = tmp_path / "elsewhere"
    secret_dir.mkdir()
    (secret_dir / "s.txt").write_text("x")
    (home / "link").symlink_to(secret_dir, target_is_directory=True)
    with pytest.raises(ToolError, match="link that points outside"):
        resolve_user_path("link/s.txt", ctx)
    with pytest.raises(ToolError, match="link that points outside"):
        resolve_user_path("link", ctx)
    # the link itself may be removed or inspected (keep_link): its folder is inside the root
    assert PathGuard(ctx).resolve("link", keep_link=True) == home.resolve() / "link"


def test_symlink_inside_root_resolves_to_target(ctx: ToolContext, home: Path) -> None:
    (home / "real").mkdir()
    (home / "alias").symlink_to(home / "real", target_is_directory=True)
    assert resolve_user_path("alias/f.txt", ctx) == home.resolve() / "real" / "f.txt"


@pytest.mark.parametrize(
    "rel",
    [
        ".ssh/id_rsa",
        ".gnupg",
        ".aws/credentials",
        ".local/share/keyrings/login.keyring",
        "Library/Keychains/login.keychain-db",
        ".config/google-chrome/Default/Cookies",
        ".mozilla/firefox/x.default/logins.json",
        "Library/Application Support/Google/Chrome/Default",
        "Library/Safari/History.db",
        "AppData/Local/Microsoft/Edge/User Data/Default",
        "AppData/Roaming/Mozilla/Firefox/Profiles",
    ],
)
def test_denied_folders_refused(ctx: ToolContext, home: Path, rel: str) -> None:
    with pytest.raises(ToolError, match="refused: it is inside"):
        resolve_user_path(rel, ctx)


def test_symlink_into_denied_folder_refused(ctx: ToolContext, home: Path) -> None:
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("KEY")
    (home / "innocent").symlink_to(home / ".ssh" / "id_rsa")
    with pytest.raises(ToolError, match="refused"):
        resolve_user_path("innocent", ctx)


def test_weclaw_database_and_config_denied(ctx: ToolContext, home: Path, tmp_path: Path) -> None:
    paths = app_paths()
    wide = ToolContext(outputs_dir=tmp_path / "out", data_dir=tmp_path / "data", db=None, allowed_roots=[tmp_path])
    for target in (paths.database, paths.config / "settings.json", Path(str(paths.database) + "-wal")):
        with pytest.raises(ToolError, match="refused"):
            resolve_user_path(str(target), wide)
    # but the outputs folder inside the data dir is fine
    assert resolve_user_path(str(paths.outputs / "a.txt"), wide) == paths.outputs.resolve() / "a.txt"


def test_outputs_dir_always_allowed(ctx: ToolContext, outputs: Path) -> None:
    assert resolve_user_path(str(outputs / "r.md"), ctx) == outputs.resolve() / "r.md"


def test_must_exist_and_for_write(ctx: ToolContext, home: Path) -> None:
    with pytest.raises(ToolError, match="does not exist"):
        resolve_user_path("missing.txt", ctx, must_exist=True)
    with pytest.raises(ToolError, match="allowed root folder itself"):
        resolve_user_path("~", ctx, for_write=True)
    assert resolve_user_path("~", ctx, must_exist=True) == home.resolve()


@pytest.mark.parametrize("bad", ["", "   ", "''", "a\x00b", "~nosuchuser_xyz/f"])
def test_bad_input(ctx: ToolContext, bad: str) -> None:
    with pytest.raises(ToolError):
        resolve_user_path(bad, ctx)


@pytest.mark.skipif(os.name == "nt", reason="POSIX behaviour")
def test_windows_path_on_posix_is_explained(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="is a Windows path"):
        resolve_user_path(r"C:\Users\me\file.txt", ctx)
    with pytest.raises(ToolError, match="is a Windows path"):
        resolve_user_path("D:/data", ctx)


def test_file_url_accepted(ctx: ToolContext, home: Path) -> None:
    assert resolve_user_path(f"file://{home}/a%20b.txt", ctx) == home.resolve() / "a b.txt"


def test_guard_walk_helpers(ctx: ToolContext, home: Path) -> None:
    guard = PathGuard(ctx)
    (home / ".ssh").mkdir()
    assert guard.is_denied(home / ".ssh" / "id_rsa")
    assert not guard.is_allowed(home / ".ssh")
    assert guard.is_allowed(home / "docs")
    assert not guard.is_allowed(Path("/etc"))


@pytest.mark.skipif(sys.platform not in ("win32", "darwin"), reason="case-insensitive file systems")
def test_denied_check_ignores_case(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="refused"):
        resolve_user_path(".SSH/id_rsa", ctx)
