"""The repository's own text files carry no leftover merge-conflict markers.

What must survive: a merge that left `<<<<<<<` / `>>>>>>>` lines in README, a catalogue, tools.json or the code
fails here, instead of reaching users as a garbled README table or a catalogue that does not parse. (One did:
the README's command table carried both sides of a conflict for a while.)
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = {
    ".py",
    ".md",
    ".toml",
    ".json",
    ".jsonl",
    ".js",
    ".html",
    ".css",
    ".txt",
    ".spec",
    ".sh",
    ".xml",
    ".desktop",
}
SKIP = {".git", "node_modules", "build", "dist", ".venv", "__pycache__", ".mypy_cache", ".ruff_cache"}
MARKERS = ("<<<<<<< ", ">>>>>>> ")


def _text_files() -> list[Path]:
    found: list[Path] = []
    stack = [ROOT]
    while stack:
        folder = stack.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                if entry.name not in SKIP:
                    stack.append(entry)
            elif entry.suffix in SUFFIXES or entry.name in {"run", "README"}:
                found.append(entry)
    return found


def test_no_merge_conflict_markers_in_the_repository() -> None:
    files = _text_files()
    assert len(files) > 200, "the scan found too little: is it looking at the repository?"
    left = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in files
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if line.startswith(MARKERS)
    ]
    assert left == [], "merge-conflict markers left in: " + ", ".join(left)
