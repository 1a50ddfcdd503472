"""Architecture rules that keep the agent, tool system and CLI free of the GUI."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "weclaw_desktop"


def _allowed(path: Path) -> bool:
    rel = path.relative_to(PACKAGE)
    if rel.parts[0] == "ui" or rel.as_posix() == "app.py":
        return True
    return rel.parts[0] == "bridges" and rel.name.startswith("qt")


def _imports_pyside(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        if any(n.split(".")[0] in ("PySide6", "shiboken6") for n in names):
            lines.append(node.lineno)
    return lines


def test_pyside6_only_in_ui_bridges_qt_and_app() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if _allowed(path):
            continue
        offenders += [f"{path.relative_to(PACKAGE)}:{line}" for line in _imports_pyside(path)]
    assert offenders == [], f"PySide6 imported outside ui/, bridges/qt*.py, app.py: {offenders}"


def test_the_rule_catches_an_offender(tmp_path: Path) -> None:
    bad = tmp_path / "x.py"
    bad.write_text("from PySide6.QtCore import QObject\nimport json\n", encoding="utf-8")
    assert _imports_pyside(bad) == [1]


def test_no_module_over_600_lines() -> None:
    long = [
        f"{p.relative_to(PACKAGE)} ({n})"
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 650
    ]
    assert long == []
