"""Render the storage-fault notices of the GUI to PNGs, in English and Chinese.

    python scripts/storage_shots.py OUT_DIR [--theme light|dark] [--lang en,zh]

Three scenes, each with the real window, the real start-up path (``app.load_runtime``) and a real
``weclaw.db`` in a fresh temp folder (HOME and WECLAW_HOME point there; nothing touches the real data):

1. ``damaged``: weclaw.db is garbage at start: the notice names the kept copy, chat works.
2. ``locked``: another process holds weclaw.db locked at start: the notice says which file is busy and
   by whom; the process lets go and the app goes on ("can be used again").
3. ``full``: the disk fills while a message is saved (SQLITE_FULL injected at the storage layer): the
   turn ends with the full-disk message in the chat.

Runs offscreen by default (set QT_QPA_PLATFORM=xcb under ``xvfb-run`` for a real X11 window).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LANG", "C.UTF-8")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA locking_mode=EXCLUSIVE")
conn.execute("BEGIN EXCLUSIVE")
conn.execute("CREATE TABLE IF NOT EXISTS held(x)")
print("locked", flush=True)
sys.stdin.read()
"""


async def say(window: Any, text: str) -> None:
    """Type a message the way the composer does (a background task of the controller) and wait for it."""
    window.controller.spawn(window.controller.send(text))
    await window.controller.idle()
    handle = window.controller.handle
    if handle is not None:
        await handle.wait()
    await window.controller.idle()


async def scene(name: str, out: Path, lang: str, theme_name: str, base: Path) -> Path:
    from fakeopenai import FakeOpenAI, text_reply
    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.app import root as app_module
    from weclaw_desktop.i18n import set_language
    from weclaw_desktop.paths import app_paths
    from weclaw_desktop.secrets import SecretStore
    from weclaw_desktop.settings import Settings
    from weclaw_desktop.storage import db as dbmod
    from weclaw_desktop.ui import theme
    from weclaw_desktop.ui.boot import build_window

    os.environ["WECLAW_HOME"] = str(base / name)
    paths = app_paths().ensure()
    set_language(lang)
    qapp = QApplication.instance()
    assert isinstance(qapp, QApplication)
    theme.apply_theme(qapp, theme_name)
    fake = await FakeOpenAI(model="deepseek-chat").start()
    settings = Settings()
    settings.provider.preset = "deepseek"
    settings.provider.base_url = fake.base_url
    settings.provider.model = "deepseek-chat"
    settings.provider.max_retries = 0
    settings.ui.language = lang  # type: ignore[assignment]
    secrets = SecretStore()
    secrets.set(settings.provider.api_key_name, "sk-screenshot-0000")
    window = build_window(settings, secrets=secrets, tools_json=ROOT / "tools.json")
    window.resize(1100, 700)
    window.show()
    holder: Any = None
    original = dbmod._Connection.execute
    app_module.STORAGE_RETRY_S = 1.0
    try:
        if name == "damaged":
            paths.database.write_bytes(os.urandom(32 * 1024))
        if name == "locked":
            sqlite3.connect(paths.database).close()
            holder = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                HOLDER,
                str(paths.database),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
            )
            assert holder.stdout is not None
            await holder.stdout.readline()
            asyncio.get_running_loop().call_later(7.0, holder.stdin.close)
        runtime = await app_module.load_runtime(window, paths)
        await window.controller.idle()
        if name == "full":
            fake.push(text_reply("你好！" if lang == "zh" else "Hello!"))
            await say(window, "你好" if lang == "zh" else "hi")
            full = {"on": True}

            def execute(self: Any, sql: str, parameters: Any = (), /) -> Any:
                if full["on"] and sql.lstrip().upper().startswith(("INSERT", "UPDATE")):
                    exc = sqlite3.OperationalError("database or disk is full")
                    exc.sqlite_errorcode = 13  # type: ignore[attr-defined]
                    raise exc
                return original(self, sql, parameters)

            dbmod._Connection.execute = execute  # type: ignore[method-assign]
            await say(window, "把报告保存到文档" if lang == "zh" else "save the report to Documents")
        await asyncio.sleep(0.3)
        path = out / f"storage-{name}-{lang}-{theme_name}.png"
        window.grab().save(str(path))
        await window.controller.shutdown()
        del runtime
        return path
    finally:
        dbmod._Connection.execute = original  # type: ignore[method-assign]
        if holder is not None and holder.returncode is None:
            holder.kill()
            await holder.wait()
        window.close()
        await fake.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="folder for the PNGs")
    parser.add_argument("--theme", default="light", choices=["light", "dark"])
    parser.add_argument("--lang", default="en,zh", help="comma-separated: en,zh")
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    import keyring
    from keyring.backends import fail
    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.ui.qtloop import WeclawEventLoop

    keyring.set_keyring(fail.Keyring())  # type: ignore[no-untyped-call]  # never the real keyring
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    loop = WeclawEventLoop(app)
    asyncio.set_event_loop(loop)
    shots: list[Path] = []
    base = Path(tempfile.mkdtemp(prefix="weclaw-storage-shots-"))
    os.environ["HOME"] = str(base / "home")
    try:
        with loop:
            for lang in (part.strip() for part in args.lang.split(",")):
                for name in ("damaged", "locked", "full"):
                    shots.append(loop.run_until_complete(scene(name, out, lang, args.theme, base / lang)))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    for path in shots:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
