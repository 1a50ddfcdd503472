"""``weclaw doctor``: is this machine ready? Keyring, Qt, data dir, settings, tools, and the model endpoint.

Settings: one line per problem the settings store found (a field that could not be read and what is used
instead, an unusable MCP server entry, an unreadable file). These are failures (exit 1): the app is then
not running as the user configured it, and for restrictions it runs stricter, so a script or a support
question should see it. Keys this version does not know (a newer version's, or a typo) are warnings only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from typing import Any

from weclaw_desktop import i18n
from weclaw_desktop.i18n import tr
from weclaw_desktop.toolkit.redact import redact


@dataclass
class Check:
    name: str
    level: str  # ok | warn | fail
    detail: str
    data: dict[str, Any] = field(default_factory=dict)  # structured detail (a settings problem's fields)


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("doctor", help="check keyring, Qt, data dir and the model endpoint")
    p.add_argument("--base-url", help="check this endpoint instead of the configured one")
    p.add_argument("--model", help="model name to look for")
    p.add_argument("--api-key-env", metavar="NAME", help="read the API key from this environment variable")
    p.add_argument("--no-qt", action="store_true", help="skip the Qt start-up check")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.json:
        i18n.set_language("en")  # machine-readable output does not depend on the terminal's locale
    checks = asyncio.run(_checks(args))
    if args.json:
        print(json.dumps([asdict(c) for c in checks], ensure_ascii=False, indent=1))
    else:
        marks = {"ok": "OK  ", "warn": "WARN", "fail": "FAIL"}
        for c in checks:
            print(f"{marks[c.level]}  {c.name:<10} {c.detail}")
    return 1 if any(c.level == "fail" for c in checks) else 0


async def _checks(args: argparse.Namespace) -> list[Check]:
    from weclaw_desktop import __version__
    from weclaw_desktop.paths import app_paths
    from weclaw_desktop.secrets import take_env_secrets
    from weclaw_desktop.settings import SettingsStore

    # keys leave os.environ before any child process (the Qt check) starts
    env_keys = take_env_secrets((args.api_key_env,) if args.api_key_env else ())
    out = [Check("version", "ok", f"weclaw {__version__}, Python {sys.version.split()[0]} on {sys.platform}")]
    paths = app_paths()
    out.append(_data_dir(paths.data))
    store = SettingsStore.open(paths)
    out += _settings(store)
    settings = store.settings
    out.append(_keyring(settings.provider.api_key_name))
    if not args.no_qt:
        out.extend(await asyncio.to_thread(_platform))
    out.append(_timezones())
    out.append(_tls())
    out.append(_tools(settings))
    out.append(await _endpoint(args, settings, env_keys))
    return out


def _data_dir(path: Any) -> Check:
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".doctor-"):
            pass
    except OSError as exc:
        return Check("data dir", "fail", tr("cli.doctor.not_writable", path=path, reason=exc.strerror or exc))
    return Check("data dir", "ok", str(path))


def _settings(store: Any) -> list[Check]:
    """One check per settings problem (``fail`` for errors, ``warn`` for notes), or one ``ok``."""
    if not store.problems:
        state = "read, no problems" if store.path.exists() else "not created yet (defaults)"
        return [Check("settings", "ok", f"{store.path}: {state}")]
    out = [Check("settings", "fail" if p.is_error else "warn", p.line(), p.as_dict()) for p in store.problems]
    if store.broken_copy is not None:
        out.append(Check("settings", "warn", f"the file as it was is kept in {store.broken_copy}"))
    return out


def _keyring(key_name: str) -> Check:
    from weclaw_desktop.secrets import SecretStore, backend_name

    store = SecretStore()
    has = store.has(key_name)
    if not store.persistent:
        return Check("keyring", "warn", tr("cli.doctor.no_keyring", error=store.last_error))
    stored = tr("cli.doctor.key_stored") if has else tr("cli.doctor.key_not_stored")
    return Check("keyring", "ok", f"{backend_name()}; {stored}")


QT_PROBE = "from PySide6.QtWidgets import QApplication; a = QApplication([]); print(a.platformName())"


def _platform() -> list[Check]:
    """The preflight's checks (Qt libraries, display, fonts), then a real Qt start in a child process."""
    from weclaw_desktop.preflight import display_problem, platform_report

    out = [Check(c.name, "warn" if c.warn else "ok" if c.ok else "fail", c.detail) for c in platform_report()]
    if any(c.level == "fail" for c in out):
        return [*out, Check("qt", "fail", "not started: fix the lines above first (`weclaw chat` works meanwhile)")]
    if sys.platform.startswith("linux"):
        _chosen, problem = display_problem()
        if problem is not None:
            return [*out, Check("qt", "fail", problem.text)]
    return [*out, _qt()]


def _qt() -> Check:
    from weclaw_desktop.tools.python_runner import interpreter_argv

    argv = [*interpreter_argv()[:1], "-c", QT_PROBE]  # the bundle runs -c like Python does
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check("qt", "fail", tr("cli.doctor.qt_failed", reason=exc))
    if proc.returncode == 0:
        return Check("qt", "ok", tr("cli.doctor.qt_ok", platform=proc.stdout.strip() or "?"))
    lines = [line for line in (proc.stderr or "").splitlines() if line.strip()]
    reason = (lines or ["exit " + str(proc.returncode)])[-1][:200]
    hint = " " + tr("cli.doctor.qt_display") if sys.platform.startswith("linux") else ""
    return Check("qt", "fail", tr("cli.doctor.qt_failed", reason=reason) + hint)


def _timezones() -> Check:
    from weclaw_desktop.preflight.tz import zone_database

    db = zone_database()
    return Check("timezones", {"system": "ok", "bundled": "warn", "none": "fail"}[db.source], db.text)


def _tls() -> Check:
    from weclaw_desktop.net import trust

    found = trust()
    return Check("tls", "ok" if found.source == "system" else "warn", f"trust from {found.text}")


def _tools(settings: Any) -> Check:
    """How many tools can be offered, by the exposure computation the app uses (the user's tool policy)."""
    from weclaw_desktop.commands.common import manifest_or_exit
    from weclaw_desktop.secrets import SecretStore
    from weclaw_desktop.toolkit.availability import AvailabilityContext
    from weclaw_desktop.toolkit.exposure import ExposurePlanner
    from weclaw_desktop.toolkit.registry import ToolRegistry

    secrets = SecretStore()
    try:
        registry = ToolRegistry(manifest_or_exit(None))
        exposure = ExposurePlanner(
            registry,
            policy=lambda: settings.tools.policy,
            availability=lambda: AvailabilityContext(has_secret=secrets.has),
        )
        result = exposure.compute()
    except (SystemExit, Exception) as exc:
        return Check("tools", "fail", tr("cli.doctor.tools_broken", reason=exc))
    return Check("tools", "ok", tr("cli.doctor.tools_ok", available=len(result.visible), hidden=len(result.hidden)))


async def _endpoint(args: argparse.Namespace, settings: Any, env_keys: dict[str, str]) -> Check:
    from weclaw_desktop.agent.provider import Provider, ProviderConfig, ProviderError
    from weclaw_desktop.secrets import API_KEY_ENV, SecretStore

    p = settings.provider
    base_url = args.base_url or p.base_url
    if not base_url:
        return Check("endpoint", "warn", tr("cli.doctor.no_endpoint"))
    key = env_keys.get(args.api_key_env) if args.api_key_env else None
    key = key or SecretStore().get(p.api_key_name) or next((env_keys[e] for e in API_KEY_ENV if e in env_keys), None)
    config = ProviderConfig(
        base_url=base_url,
        model=args.model or p.model,
        api_key=key,
        timeout_s=min(p.timeout_s, 20.0),
        max_retries=0,
        preset="" if args.base_url else p.preset,
    )
    provider = Provider(config)
    try:
        detail = await provider.check()
    except ProviderError as exc:
        return Check("endpoint", "fail", f"{redact(base_url)}: {redact(exc.message)}")
    finally:
        await provider.close()
    return Check("endpoint", "ok", tr("cli.doctor.endpoint_ok", url=redact(base_url), detail=detail))
