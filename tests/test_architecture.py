"""The package's architecture, enforced: layers (imports point down), no import cycles, Qt only at the top.

The import graph is read from the source (AST), not from a running interpreter, so every import counts:
module level, inside functions (lazy imports), under ``if TYPE_CHECKING:``, and ``importlib.import_module``
with a literal name. Type-only imports count on purpose: a lower layer annotated with an upper layer's
type is written against that layer (it cannot be understood, tested or reused without it), and the two
cycles this project had both closed through a ``TYPE_CHECKING`` import.

:data:`LAYERS` is the design's layer table, declared once (docs/ARCHITECTURE.md shows it). A module may
import modules of its own layer and of the layers below; a module no entry covers fails the test, so a
new package has to be placed on purpose.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "weclaw_desktop"
ROOT = "weclaw_desktop"

#: Top to bottom. Entries are module paths under weclaw_desktop ("" is the package itself); the longest
#: matching entry places a module.
LAYERS: list[tuple[str, list[str]]] = [
    ("entry points", ["__main__", "cli", "bundling"]),  # `weclaw` and its subcommands; the bundle's spec
    ("composition", ["app"]),  # builds and connects everything (GUI), owns the long-lived services
    ("front ends", ["ui", "commands"]),  # Qt windows and dialogs; the terminal commands
    ("self-check", ["selfcheck"]),  # `weclaw --self-test` / doctor checks (uses the agent's provider)
    ("agent", ["agent"]),  # conversation loop, provider, history, runtime
    ("routing", ["intent"]),  # which tools a request needs
    ("capabilities", ["tools", "mcp", "attachments"]),  # tools, MCP tools; attachments reads files (tools.textio)
    ("services", ["companion"]),  # the phone link's server and store (a bridge to the tools)
    ("settings", ["settings", "secrets"]),  # the settings schema (embeds the toolkit's policy models), keyring
    ("tool system", ["toolkit"]),  # tool contract, manifest, registry, policy, planner, dispatcher
    ("bridge contracts", ["bridges"]),  # the protocols tools use; Qt implementations in bridges/qt_*.py
    (
        "foundation",
        ["", "i18n", "storage", "net", "paths", "clock", "elf", "frozen", "preflight", "textsafe"],
    ),  # no knowledge of anything above
]

#: Where PySide6 / shiboken6 may be imported: the Qt front end, the Qt bridges, the composition root.
QT_ALLOWED = ("ui", "bridges.qt_", "app")

#: Cycles being removed right now on other branches, each listed by the edge that closes it. The lead
#: empties this list when those branches merge (the test says so once an entry no longer closes a cycle).
KNOWN_CYCLES: dict[tuple[str, str], str] = {}


# --- the import graph ------------------------------------------------------------------------------------
def module_name(path: Path, package: Path) -> str:
    """``weclaw_desktop.ui.boot`` for ``.../weclaw_desktop/ui/boot.py`` (a package is its ``__init__``)."""
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(tree: ast.AST, module: str, is_package: bool, modules: set[str]) -> Iterable[tuple[str, int]]:
    """(imported module or name, line) for every import anywhere in the tree. ``from pkg import x`` is an
    import of the submodule ``pkg.x`` when there is one, else of ``pkg`` (x is a name defined there)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                name = ".".join([*base, *([node.module] if node.module else [])])
            else:
                name = node.module or ""
            for alias in node.names:
                sub = f"{name}.{alias.name}"
                yield (sub if sub in modules else name), node.lineno
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.args[0].value, node.lineno


def import_graph(package: Path) -> tuple[dict[str, dict[str, int]], dict[str, list[tuple[str, int]]]]:
    """(internal edges: module -> {imported module: line}, external imports: module -> [(name, line)])."""
    files = {module_name(p, package): p for p in sorted(package.rglob("*.py"))}
    root = package.name
    edges: dict[str, dict[str, int]] = {m: {} for m in files}
    external: dict[str, list[tuple[str, int]]] = {m: [] for m in files}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for name, line in _imports(tree, module, path.name == "__init__.py", set(files)):
            if name != root and not name.startswith(root + "."):
                external[module].append((name, line))
                continue
            while name not in files and "." in name:  # `import pkg.mod.Name`-like: the deepest module named
                name = name.rsplit(".", 1)[0]
            if name in files and name != module:
                edges[module].setdefault(name, line)
    return edges, external


def cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in edges:
        if start in index:
            continue
        work: list[tuple[str, Iterable[str]]] = [(start, iter(edges[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(iter(children), None)  # type: ignore[call-overload]
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges.get(child, {}))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def layer_of(module: str, layers: list[tuple[str, list[str]]] = LAYERS, root: str = ROOT) -> int | None:
    """The index in ``layers`` (0 = top) of the longest entry covering ``module``; None if none does."""
    rel = module.removeprefix(root).lstrip(".")
    best: tuple[int, int] | None = None  # (entry length, layer index)
    for i, (_name, entries) in enumerate(layers):
        for entry in entries:
            covers = rel == entry or (entry and rel.startswith(entry + ".")) or (entry == "" and rel == "")
            if covers and (best is None or len(entry) > best[0]):
                best = (len(entry), i)
    return None if best is None else best[1]


def upward_imports(
    edges: dict[str, dict[str, int]], layers: list[tuple[str, list[str]]] = LAYERS, root: str = ROOT
) -> list[str]:
    problems = []
    for module, targets in edges.items():
        mine = layer_of(module, layers, root)
        for target, line in targets.items():
            theirs = layer_of(target, layers, root)
            if mine is not None and theirs is not None and theirs < mine:
                problems.append(
                    f"{module}:{line} imports {target}: layer '{layers[mine][0]}' reaching up to '{layers[theirs][0]}'"
                )
    return problems


def _short(name: str) -> str:
    return name.removeprefix(ROOT + ".")


# --- the rules --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def graph() -> tuple[dict[str, dict[str, int]], dict[str, list[tuple[str, int]]]]:
    return import_graph(PACKAGE)


def test_every_module_has_a_layer(graph: tuple[dict[str, dict[str, int]], object]) -> None:
    """A new package is placed in the layer table on purpose, not by accident."""
    edges, _ = graph
    assert [m for m in edges if layer_of(m) is None] == []


def test_imports_point_down_the_layers(graph: tuple[dict[str, dict[str, int]], object]) -> None:
    """No module imports from a layer above its own (e.g. ui/ never imports the composition root)."""
    edges, _ = graph
    assert upward_imports(edges) == []


def test_no_import_cycles_between_modules(graph: tuple[dict[str, dict[str, int]], object]) -> None:
    """No two modules of the package depend on each other, directly or around a loop (apart from the
    known cycles being removed on other branches, by their closing edge)."""
    edges, _ = graph
    pruned = {
        m: {t: line for t, line in ts.items() if (_short(m), _short(t)) not in KNOWN_CYCLES} for m, ts in edges.items()
    }
    assert [[_short(m) for m in c] for c in cycles(pruned)] == []


def test_known_cycles_still_exist(graph: tuple[dict[str, dict[str, int]], object]) -> None:
    """An allow-listed edge that no longer closes a cycle must leave KNOWN_CYCLES (the list only shrinks)."""
    edges, _ = graph
    in_cycle = {m for c in cycles(edges) for m in c}
    stale = [
        f"{a} -> {b} ({why})"
        for (a, b), why in KNOWN_CYCLES.items()
        if f"{ROOT}.{b}" not in edges.get(f"{ROOT}.{a}", {}) or f"{ROOT}.{a}" not in in_cycle
    ]
    assert stale == [], "remove these from KNOWN_CYCLES: the cycle is gone"


def test_pyside6_only_in_ui_qt_bridges_and_the_composition_root(
    graph: tuple[object, dict[str, list[tuple[str, int]]]],
) -> None:
    """The agent, the tool system and the CLI run with no display: Qt stays at the top."""
    _, external = graph
    offenders = [
        f"{_short(m)}:{line}"
        for m, names in external.items()
        if not _short(m).startswith(QT_ALLOWED)
        for name, line in names
        if name.split(".")[0] in ("PySide6", "shiboken6")
    ]
    assert offenders == []


def test_no_module_over_600_lines() -> None:
    """Small modules with one job: no file over 600 lines."""
    long = [
        f"{p.relative_to(PACKAGE)} ({n})"
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600
    ]
    assert long == []


# --- the checker itself -------------------------------------------------------------------------------------
def test_the_checker_finds_cycles_upward_and_lazy_imports(tmp_path: Path) -> None:
    """On a tiny package with one of each problem the checks fire: a cycle through a TYPE_CHECKING import,
    an upward import inside a function, a literal import_module, and `from pkg import submodule` (an edge to
    the submodule, not to the package's __init__)."""
    pkg = tmp_path / "demo"
    (pkg / "low").mkdir(parents=True)
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "low" / "__init__.py").write_text("from demo.low.a import A\n", encoding="utf-8")
    (pkg / "low" / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from demo.low.b import B\nclass A: ...\n",
        encoding="utf-8",
    )
    (pkg / "low" / "b.py").write_text("from demo.low import a\nclass B: ...\n", encoding="utf-8")
    (pkg / "top.py").write_text("import importlib\nimportlib.import_module('demo.low.b')\n", encoding="utf-8")
    (pkg / "low" / "c.py").write_text("def f():\n    from demo import top\n", encoding="utf-8")
    edges, _ = import_graph(pkg)
    assert edges["demo.low.b"] == {"demo.low.a": 1}  # not demo.low (the package) as well
    assert edges["demo.top"] == {"demo.low.b": 2}
    assert cycles(edges) == [["demo.low.a", "demo.low.b"]]
    layers = [("top", ["top"]), ("low", ["low", ""])]
    assert layer_of("demo.low.c", layers, "demo") == 1 and layer_of("demo", layers, "demo") == 1
    assert upward_imports(edges, layers, "demo") == ["demo.low.c:2 imports demo.top: layer 'low' reaching up to 'top'"]
