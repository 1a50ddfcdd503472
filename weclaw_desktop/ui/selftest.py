"""``weclaw --self-test``: can this build start and do its job? Works from source and from the bundle.

Offscreen (no display needed), with user data in ``$WECLAW_HOME`` or, when that is unset, a temporary
folder removed afterwards. One line per check (ok/FAIL, name, time, detail):

- paths: tools.json and resources/ found through the resource helper; user data outside the bundle;
- registry and tools.json validation (``toolkit/validator.py``);
- tls: the outgoing SSL context verifies, and certifi's CA bundle (the fallback) is present;
- keyring: the active backend, the native backend and its dependencies import (on Linux Secret Service's
  DH+AES transport encryption runs), and every backend keyring knows with its priority or reason;
- window: the main window is built with its Qt bridges and the bridged tools become available;
- pairing QR: a pairing code rendered to a QPixmap;
- translations: every message catalogue loads with the English one's keys, and Qt's own Chinese catalogue
  (``qtbase_zh_CN.qm``, the only Qt translation the bundle keeps) is found and translates a button;
- provider: one streamed completion from an in-process fake OpenAI-compatible server, through the real
  provider (openai SDK, the app's TLS wiring);
- python_runner: ``print(6 * 7)`` through the dispatcher (in the bundle: the app with ``--run-python``),
  then a snippet importing the standard library, starting ``sys.executable -c`` and a spawn Pool;
- child-env: ``bash -c env`` through the shell tool: nothing of PyInstaller's, the user's variables back;
- fonts and time zones; when Qt's libraries do not load here (no libGL ...), a ``qt`` line says which
  packages to install and the checks that need Qt are skipped, the others still run.

Exit 0 only if every check passed.
"""

from __future__ import annotations

import asyncio
import os
import platform
import shutil
import sys
import tempfile
from typing import TextIO

from weclaw_desktop import __version__
from weclaw_desktop.paths import HOME_ENV, AppPaths, app_paths
from weclaw_desktop.selfcheck import checks, platform_checks
from weclaw_desktop.selfcheck.report import CheckFailed, SelfTestReport
from weclaw_desktop.toolkit.registry import ToolRegistry

#: Pairing URL used for the QR check (a LAN address; nothing listens there).
QR_SAMPLE_BASE = "http://192.168.1.20:53318"


def run_self_test(out: TextIO | None = None) -> int:
    """Run every check, print one line each and a summary; 0 if all passed, else 1."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    temp_home = None
    if not os.environ.get(HOME_ENV):
        temp_home = tempfile.mkdtemp(prefix="weclaw-selftest-")
        os.environ[HOME_ENV] = temp_home
    report = SelfTestReport(out or sys.stdout)
    print(_header(), file=report.out, flush=True)
    try:
        _run(report, app_paths().ensure())
    finally:
        if temp_home is not None:
            os.environ.pop(HOME_ENV, None)
            shutil.rmtree(temp_home, ignore_errors=True)
    print(report.summary(), file=report.out, flush=True)
    return 0 if report.ok else 1


def _header() -> str:
    try:
        from PySide6 import __version__ as pyside_version
    except ImportError:
        pyside_version = "missing"

    mode = "bundle" if getattr(sys, "frozen", False) else "source"
    return (
        f"WeClaw {__version__} self-test ({mode}; Python {platform.python_version()}, PySide6 {pyside_version}, "
        f"{platform.system()} {platform.machine()})"
    )


def _run(report: SelfTestReport, paths: AppPaths) -> None:
    from weclaw_desktop.preflight import qt_library_problem

    report.check("paths", lambda: checks.check_paths(paths))
    built: list[ToolRegistry] = []

    def registry() -> str:
        reg, detail = checks.build_registry()
        built.append(reg)
        return detail

    report.check("registry", registry)
    report.check("tools.json", checks.check_validation)
    report.check("tls", checks.check_tls)
    report.check("keyring", checks.check_keyring)
    report.check("keyring-backends", checks.check_keyring_backends)
    report.check("fonts", platform_checks.check_fonts)
    report.check("timezones", platform_checks.check_timezones)
    problem = qt_library_problem(os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    if problem is not None:
        report.check("qt", lambda: _fail(problem.text))
        asyncio.run(_async_checks(report, built[0] if built else None, paths, []))
        return

    from weclaw_desktop.settings import SettingsStore
    from weclaw_desktop.ui.boot import prepare_ui, qt_application
    from weclaw_desktop.ui.qtloop import WeclawEventLoop

    app = qt_application([sys.argv[0] if sys.argv else "weclaw"])
    store = SettingsStore.open(paths)
    prepare_ui(app, store.settings)
    loop = WeclawEventLoop(app)
    asyncio.set_event_loop(loop)
    windows: list[object] = []
    with loop:
        if built:
            report.check("window", lambda: _check_window(store, built[0], windows))
        report.check("pairing-qr", _check_qr)
        report.check("translations", _check_translations)
        loop.run_until_complete(_async_checks(report, built[0] if built else None, paths, windows))
    asyncio.set_event_loop(None)


async def _async_checks(
    report: SelfTestReport, registry: ToolRegistry | None, paths: AppPaths, windows: list[object]
) -> None:
    await report.acheck("provider", checks.check_provider_stream)
    if registry is not None:
        await report.acheck("python_runner", lambda: checks.check_python_runner(registry, paths))
        await report.acheck("python-stdlib", lambda: platform_checks.check_python_stdlib(registry, paths))
        await report.acheck("child-env", lambda: platform_checks.check_child_env(registry, paths))
    for window in windows:
        from weclaw_desktop.ui.main_window import MainWindow

        if isinstance(window, MainWindow):
            await window.controller.shutdown()
            window.close()
            window.deleteLater()


def _fail(text: str) -> str:
    raise CheckFailed(text)


def _check_window(store: object, registry: ToolRegistry, keep: list[object]) -> str:
    from weclaw_desktop.settings import SettingsStore
    from weclaw_desktop.toolkit.planner import plan
    from weclaw_desktop.ui.boot import build_window

    assert isinstance(store, SettingsStore)
    policy = store.settings.tools.policy
    bridged = [t for t in registry.tool_names() if registry.spec(t).bridges]
    hidden_before = set(plan(registry, policy).hidden)
    window = build_window(store, registry=registry)
    keep.append(window)
    provided = set(window.bridges)
    if not provided <= registry.bridge_names():
        raise CheckFailed(f"bridges not injected: {sorted(provided - registry.bridge_names())}")
    served = [t for t in bridged if set(registry.spec(t).bridges) <= provided]
    if not served:
        raise CheckFailed(f"no tool in tools.json uses the window's bridges {sorted(provided)}")
    not_hidden_before = [t for t in served if t not in hidden_before]
    if not_hidden_before:
        raise CheckFailed(f"tools offered before their bridges existed: {not_hidden_before}")
    states = {t: window.board.state(t) for t in served}
    unavailable = {t: s for t, s in states.items() if s not in ("available", "exposed")}
    if unavailable:
        raise CheckFailed(f"bridged tools still unavailable after injection: {unavailable}")
    pixmap = window.grab()
    if pixmap.isNull() or pixmap.width() < 100:
        raise CheckFailed("the main window did not render")
    from PySide6.QtGui import QGuiApplication

    return (
        f"main window {pixmap.width()}x{pixmap.height()} rendered on {QGuiApplication.platformName()}; bridges {', '.join(sorted(provided))}; "
        f"now available: {', '.join(served)}"
    )


def _check_qr() -> str:
    from PySide6.QtGui import QPixmap

    from weclaw_desktop.companion.pairing import PairingCodes
    from weclaw_desktop.companion.qr import qr_png

    scale, border = 6, 3
    code = PairingCodes().new(QR_SAMPLE_BASE)
    pixmap = QPixmap()
    if not pixmap.loadFromData(qr_png(code.url, scale=scale, border=border), "PNG") or pixmap.isNull():
        raise CheckFailed("the pairing QR code PNG did not load into a QPixmap")
    image = pixmap.toImage()
    corner = border * scale + 1  # inside the top-left finder pattern: dark; the quiet zone: light
    if image.pixelColor(corner, corner).lightness() > 100 or image.pixelColor(1, 1).lightness() < 200:
        raise CheckFailed("the QR code image does not have a finder pattern where expected")
    return f"{pixmap.width()}x{pixmap.height()} px for a {len(code.url)}-character pairing URL"


def _check_translations() -> str:
    from PySide6.QtCore import QTranslator

    from weclaw_desktop.i18n import LANGUAGES
    from weclaw_desktop.i18n.catalogue import catalogue
    from weclaw_desktop.ui.translation import QT_CATALOGUES, translations_dirs

    reference = set(catalogue("en"))
    for lang in LANGUAGES:
        missing = reference - set(catalogue(lang))
        if missing:
            raise CheckFailed(f"the {lang} catalogue lacks {len(missing)} messages, e.g. {sorted(missing)[:3]}")
    name = QT_CATALOGUES["zh"]
    assert name is not None
    translator = QTranslator()
    folder = next((d for d in translations_dirs() if translator.load(name, str(d))), None)
    if folder is None:
        raise CheckFailed(f"Qt's {name}.qm is not in {[str(d) for d in translations_dirs()]}")
    yes = translator.translate("QPlatformTheme", "&Yes")
    if not yes or yes == "&Yes":
        raise CheckFailed(f"{name}.qm does not translate Qt's buttons")
    return f"{', '.join(LANGUAGES)}: {len(reference)} messages each; Qt: {name}.qm ({yes!r} for &Yes) in {folder}"
