"""build.spec's inputs: hidden imports derived from tools.json, and pruning of orphaned libraries."""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import sys
import sysconfig
from pathlib import Path

import pytest

from weclaw_desktop.bundling import (
    LAZY_MODULES,
    elf_needed,
    hidden_imports,
    orphaned_libraries,
    tool_modules,
)
from weclaw_desktop.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "weclaw_desktop"


def test_hidden_imports_cover_every_tools_json_module_and_command() -> None:
    manifest = json.loads((ROOT / "tools.json").read_text(encoding="utf-8"))
    hidden = set(hidden_imports(ROOT))
    for name, entry in manifest["tools"].items():
        assert entry["module"] in hidden, name
    for command in COMMANDS:
        assert f"weclaw_desktop.commands.{command}" in hidden
    assert "weclaw_desktop.ui.selftest" in hidden and "weclaw_desktop.tools.pyexec" in hidden


def test_every_hidden_import_exists() -> None:
    missing = [name for name in hidden_imports(ROOT) if importlib.util.find_spec(name) is None]
    assert missing == []


def test_a_tool_added_to_tools_json_is_bundled(tmp_path: Path) -> None:
    manifest = json.loads((ROOT / "tools.json").read_text(encoding="utf-8"))
    manifest["tools"]["brand_new"] = {**manifest["tools"]["calculator"], "module": "weclaw_desktop.tools.brand_new"}
    (tmp_path / "tools.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert "weclaw_desktop.tools.brand_new" in tool_modules(tmp_path / "tools.json")
    assert "weclaw_desktop.tools.brand_new" in hidden_imports(tmp_path)


def test_build_spec_uses_the_derived_hidden_imports() -> None:
    spec = ast.parse((ROOT / "build.spec").read_text(encoding="utf-8"))
    assigned = {
        node.targets[0].id: node.value
        for node in spec.body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
    }
    call = assigned["hidden"]
    assert isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "hidden_imports"
    analysis = assigned["a"]
    assert isinstance(analysis, ast.Call)
    keywords = {kw.arg: kw.value for kw in analysis.keywords}
    given = keywords["hiddenimports"]
    assert isinstance(given, ast.BinOp) and isinstance(given.left, ast.Name) and given.left.id == "hidden"


def test_modules_imported_by_name_are_hidden_imports() -> None:
    """A new ``import_module("weclaw_desktop....")`` somewhere in the app must be added to LAZY_MODULES."""
    literal = re.compile(r"""["'](weclaw_desktop\.[\w.]+)["']""")
    by_name = set()
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "import_module" in text and path.name != "bundling.py":
            by_name.update(name for name in literal.findall(text) if importlib.util.find_spec(name) is not None)
    assert "weclaw_desktop.agent.runtime" in by_name  # the scan finds what it should
    assert by_name <= set(LAZY_MODULES) | set(hidden_imports(ROOT))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF")
def test_elf_needed_reads_a_real_extension_module() -> None:
    ssl_ext = Path(importlib.util.find_spec("_ssl").origin or "")  # type: ignore[union-attr]
    needed = elf_needed(ssl_ext)
    assert needed is not None and "libc.so.6" in needed
    assert any(name.startswith("libssl") for name in needed) or any(name.startswith("libpython") for name in needed)
    assert elf_needed(ROOT / "tools.json") is None
    assert elf_needed(ROOT / "does-not-exist.so") is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF")
def test_orphaned_libraries_only_removes_what_nothing_kept_needs() -> None:
    """Real ELF files: dropped _ssl needs libssl+libcrypto+libc, kept _hashlib needs libcrypto+libc."""
    dynload = Path(sysconfig.get_path("platstdlib")) / "lib-dynload"
    ssl_ext, hashlib_ext = next(dynload.glob("_ssl*.so"), None), next(dynload.glob("_hashlib*.so"), None)
    if ssl_ext is None or hashlib_ext is None or elf_needed(ssl_ext) != ["libssl.so.3", "libcrypto.so.3", "libc.so.6"]:
        pytest.skip("this Python's _ssl is not linked the usual way")
    # the "libraries" themselves are stand-ins without dependencies (any non-ELF path)
    libs = [(name, str(ROOT / "tools.json")) for name in ("libssl.so.3", "libcrypto.so.3", "libc.so.6")]
    kept = [("python3.11/lib-dynload/_hashlib.so", str(hashlib_ext)), *libs]
    assert orphaned_libraries(kept, [("plugins/_ssl.so", str(ssl_ext))]) == {"libssl.so.3"}
    assert orphaned_libraries(kept, []) == set()
    # nothing kept needs libcrypto any more once _hashlib is gone too
    assert orphaned_libraries(libs, [("plugins/_ssl.so", str(ssl_ext))]) == {n for n, _ in libs}


def test_the_standard_library_for_python_runner() -> None:
    """Everything a snippet may import from the stdlib, without Tk, IDLE or CPython's test suites."""
    from weclaw_desktop.bundling import stdlib_modules

    names = set(stdlib_modules())
    for wanted in ("xml.etree.ElementTree", "html.parser", "email.mime.text", "unittest", "unittest.mock", "timeit",
                   "cmath", "multiprocessing.spawn", "concurrent.futures", "sqlite3", "zoneinfo", "json.tool"):  # fmt: skip
        assert wanted in names, wanted
    assert not {n for n in names if n.split(".")[0] in ("tkinter", "idlelib", "test", "turtle", "turtledemo")}
    assert not {n for n in names if {"test", "tests", "idle_test"} & set(n.split("."))}
    assert not {n for n in names if n.startswith(("_test", "xx"))}


def test_build_spec_bundles_the_stdlib_and_leaves_system_libraries() -> None:
    text = (ROOT / "build.spec").read_text(encoding="utf-8")
    assert "hiddenimports=hidden + stdlib" in text and "stdlib = stdlib_modules()" in text
    assert "not in SYSTEM_LIBRARIES" in text and "clean_rpaths(" in text
    assert '"unittest"' not in text.split("UNUSED_PY", 1)[1].split("]", 1)[0]  # python_runner needs it
    from weclaw_desktop.bundling import SYSTEM_LIBRARIES

    assert 'KEEP_QT_TRANSLATIONS = ("qtbase_zh_CN.qm",)' in text
    assert set(SYSTEM_LIBRARIES) == {"libstdc++.so.6", "libgcc_s.so.1", "libexpat.so.1"}


def test_orphans_are_removed_under_every_name_they_were_collected_as() -> None:
    """PyInstaller lists a library at the top level and in its package folder: both go, or a link dangles."""
    stand_in = str(ROOT / "tools.json")  # not ELF: no dependencies of its own
    dynload = Path(sysconfig.get_path("platstdlib")) / "lib-dynload"
    ssl_ext = next(dynload.glob("_ssl*.so"), None)
    if ssl_ext is None or "libssl.so.3" not in (elf_needed(ssl_ext) or []):
        pytest.skip("this Python's _ssl is not linked the usual way")
    kept = [("libssl.so.3", stand_in), ("PySide6/Qt/lib/libssl.so.3", stand_in), ("libcrypto.so.3", stand_in)]
    assert orphaned_libraries(kept, [("plugins/_ssl.so", str(ssl_ext))]) == {
        "libssl.so.3", "PySide6/Qt/lib/libssl.so.3", "libcrypto.so.3",
    }  # fmt: skip
