"""The command line speaks the terminal's language: messages for people follow LANGUAGE / LC_ALL / LANG,
``--json`` output stays English (it is for programs), and ``weclaw tools --lang`` overrides both.

Run as a real subprocess (``python -m weclaw_desktop``) with no display and no Qt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def weclaw(*args: str, lang: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES")}
    env.update(LANG=lang, PYTHONPATH=str(ROOT), QT_QPA_PLATFORM="", PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "weclaw_desktop", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_tools_summary_and_diagnostics_in_chinese_and_english() -> None:
    zh = weclaw("tools", "--no-mcp", lang="zh_CN.UTF-8")
    assert zh.returncode == 0, zh.stderr
    assert "个工具" in zh.stdout and "可用" in zh.stdout and "需要手机连接服务，但它没有运行" in zh.stdout
    en = weclaw("tools", "--no-mcp", lang="C.UTF-8")
    assert en.returncode == 0, en.stderr
    assert " tools: " in en.stdout and "needs the companion service, which is not running" in en.stdout
    assert not any("\u4e00" <= ch <= "\u9fff" for line in en.stdout.splitlines() if "actions" in line for ch in line)
    forced = weclaw("tools", "--no-mcp", "--lang", "en", lang="zh_CN.UTF-8")
    assert " tools: " in forced.stdout


def test_errors_are_translated_and_json_stays_english() -> None:
    bad = weclaw("models", "--preset", "nope", lang="zh_CN.UTF-8")
    assert bad.returncode == 2 and bad.stderr.startswith("错误：没有预设“nope”")
    doctor = weclaw("doctor", "--no-qt", "--json", lang="zh_CN.UTF-8")
    checks = {c["name"]: c for c in json.loads(doctor.stdout)}
    assert checks["endpoint"]["detail"] == "no model endpoint set up yet (Settings, or --base-url)"
