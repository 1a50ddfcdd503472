"""Where WeClaw keeps its files, and where its bundled resources are.

User data lives in the platformdirs locations, or all under ``WECLAW_HOME`` when that is set (tests and
portable installs use it). Nothing is ever written next to the code: a PyInstaller bundle may live in a
read-only folder. Bundled files (``tools.json``, ``resources/``) are found through :func:`resource_path`,
which behaves the same from a source checkout, an installed wheel and a frozen bundle.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import platformdirs

APP_NAME = "WeClaw"
APP_AUTHOR = "WeClaw"
HOME_ENV = "WECLAW_HOME"
TOOLS_ENV = "WECLAW_TOOLS"


@dataclass(frozen=True)
class AppPaths:
    """The folders of one user's WeClaw data. Created on first use."""

    data: Path
    config: Path
    logs: Path
    cache: Path

    @property
    def database(self) -> Path:
        return self.data / "weclaw.db"

    @property
    def settings_file(self) -> Path:
        return self.config / "settings.json"

    @property
    def outputs(self) -> Path:
        return self.data / "outputs"

    @property
    def incoming(self) -> Path:
        return self.data / "incoming"

    def ensure(self) -> AppPaths:
        for folder in (self.data, self.config, self.logs, self.cache):
            folder.mkdir(parents=True, exist_ok=True)
        return self


def app_paths(home: str | os.PathLike[str] | None = None) -> AppPaths:
    """The data folders: ``home`` if given, else ``$WECLAW_HOME``, else the platform's locations."""
    root = home if home is not None else os.environ.get(HOME_ENV)
    if root:
        base = Path(root).expanduser().resolve()
        return AppPaths(data=base / "data", config=base / "config", logs=base / "logs", cache=base / "cache")
    return AppPaths(
        data=Path(platformdirs.user_data_dir(APP_NAME, APP_AUTHOR)),
        config=Path(platformdirs.user_config_dir(APP_NAME, APP_AUTHOR)),
        logs=Path(platformdirs.user_log_dir(APP_NAME, APP_AUTHOR)),
        cache=Path(platformdirs.user_cache_dir(APP_NAME, APP_AUTHOR)),
    )


@cache
def _bundle_root() -> Path:
    """The folder that holds ``tools.json`` and ``resources/``.

    Frozen (PyInstaller): ``sys._MEIPASS``. From source or an editable install: the repository root, one
    level above the package. From a wheel: the package's own ``_bundled`` copy (added by the build).
    """
    meipass = getattr(sys, "_MEIPASS", None)
    if meipass:
        return Path(meipass)
    package_dir = Path(__file__).resolve().parent
    for candidate in (package_dir.parent, package_dir / "_bundled"):
        if (candidate / "tools.json").is_file():
            return candidate
    return package_dir.parent


def resource_path(*parts: str) -> Path:
    """Path of a bundled file under ``resources/`` (same from source and from the bundle)."""
    return _bundle_root().joinpath("resources", *parts)


def tools_json_path() -> Path:
    """The tools.json in use: ``$WECLAW_TOOLS`` if set, else the bundled one."""
    override = os.environ.get(TOOLS_ENV)
    if override:
        return Path(override).expanduser()
    return _bundle_root() / "tools.json"
