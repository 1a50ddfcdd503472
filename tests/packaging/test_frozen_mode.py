"""Frozen-mode behaviour, simulated from source: bundled files through the resource helper, user data never
next to the executable, python_runner through the app itself."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import platformdirs
import pytest

from weclaw_desktop import paths
from weclaw_desktop.selfcheck.checks import check_paths
from weclaw_desktop.selfcheck.report import CheckFailed
from weclaw_desktop.tools.python_runner import interpreter_argv

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def frozen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fake onedir bundle: <tmp>/weclaw/weclaw and <tmp>/weclaw/_internal (sys._MEIPASS)."""
    bundle = tmp_path / "weclaw"
    internal = bundle / "_internal"
    (internal / "resources" / "icons").mkdir(parents=True)
    (internal / "resources" / "icons" / "app.svg").write_text("<svg/>", encoding="utf-8")
    (internal / "tools.json").write_text((ROOT / "tools.json").read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(internal), raising=False)
    monkeypatch.setattr(sys, "executable", str(bundle / "weclaw"))
    monkeypatch.delenv(paths.TOOLS_ENV, raising=False)
    paths._bundle_root.cache_clear()
    yield bundle
    paths._bundle_root.cache_clear()


def test_resources_come_from_meipass_when_frozen(frozen: Path) -> None:
    internal = frozen / "_internal"
    assert paths.resource_path("icons", "app.svg") == internal / "resources" / "icons" / "app.svg"
    assert paths.resource_path("icons", "app.svg").read_text(encoding="utf-8") == "<svg/>"
    assert paths.tools_json_path() == internal / "tools.json"


def test_resources_come_from_the_checkout_from_source() -> None:
    paths._bundle_root.cache_clear()
    assert paths.resource_path("icons") == ROOT / "resources" / "icons"
    assert paths.tools_json_path() == ROOT / "tools.json"


def test_user_data_goes_to_platformdirs_not_next_to_the_executable(
    frozen: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(paths.HOME_ENV, raising=False)
    where = paths.app_paths()
    assert where.data == Path(platformdirs.user_data_dir(paths.APP_NAME, paths.APP_AUTHOR))
    assert where.config == Path(platformdirs.user_config_dir(paths.APP_NAME, paths.APP_AUTHOR))
    for folder in (where.data, where.config, where.logs, where.cache, where.outputs, where.database):
        assert not folder.resolve().is_relative_to(frozen)
    assert "frozen in" in check_paths(where)


def test_self_test_fails_when_user_data_would_land_inside_the_bundle(frozen: Path) -> None:
    inside = paths.app_paths(frozen / "data-here")
    with pytest.raises(CheckFailed, match="inside the bundle"):
        check_paths(inside)


def test_self_test_fails_when_a_bundled_file_is_missing(frozen: Path, tmp_path: Path) -> None:
    (frozen / "_internal" / "tools.json").unlink()
    with pytest.raises(CheckFailed, match=r"tools\.json not found"):
        check_paths(paths.app_paths(tmp_path / "home"))


def test_python_runner_starts_the_app_itself_when_frozen(frozen: Path) -> None:
    assert interpreter_argv() == [str(frozen / "weclaw"), "--run-python"]


def test_run_python_flag_runs_a_script_like_an_interpreter(tmp_path: Path) -> None:
    """What the bundle does for python_runner: ``<app> --run-python FILE ARGS``, here via ``-m``."""
    script = tmp_path / "snippet.py"
    script.write_text("import sys\nprint(6 * 7, sys.argv[1:])\nsys.exit(3)\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "weclaw_desktop", "--run-python", str(script), "a", "b"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout.strip() == "42 ['a', 'b']"
    assert proc.returncode == 3
