"""The test tree mirrors the package, and helper imports are unambiguous.

What must survive: every folder under tests/tools/ is named after a module of weclaw_desktop/tools/ (a
test for a tool is found where the tool is); no two helper modules (non-test, non-conftest files) share a
file name anywhere under tests/ — with ``--import-mode=importlib`` and several folders on ``sys.path``, two
``helpers.py`` would make ``import helpers`` mean whichever folder came first.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent
PACKAGE_TOOLS = TESTS.parent / "weclaw_desktop" / "tools"


def _helper_modules() -> list[Path]:
    return [
        p
        for p in TESTS.rglob("*.py")
        if not p.name.startswith("test_") and p.name != "conftest.py" and "__pycache__" not in p.parts
    ]


def test_tool_test_folders_are_named_after_tool_modules() -> None:
    modules = {p.stem for p in PACKAGE_TOOLS.glob("*.py")} | {
        p.name for p in PACKAGE_TOOLS.iterdir() if (p / "__init__.py").exists()
    }
    folders = {p.name for p in (TESTS / "tools").iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders, "tests/tools/ has no tool folders"
    assert folders <= modules, f"not a module of weclaw_desktop/tools: {sorted(folders - modules)}"
    old = [p.name for p in TESTS.glob("tools_*") if any(p.glob("*.py"))]  # (a stale __pycache__ is no test)
    assert old == [], "tool tests live in tests/tools/<tool>/"


def test_helper_module_names_are_unique() -> None:
    counts = Counter(p.name for p in _helper_modules())
    clashes = {
        name: sorted(str(p.relative_to(TESTS)) for p in _helper_modules() if p.name == name)
        for name, n in counts.items()
        if n > 1
    }
    assert clashes == {}
