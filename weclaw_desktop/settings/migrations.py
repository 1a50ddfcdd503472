"""Schema migrations of settings.json: an append-only list of functions on the raw JSON document.

``MIGRATIONS[i]`` turns a version ``i + 1`` document into version ``i + 2``. Never edit or reorder a
released migration (a file in the wild may be at any version); add a new one and the store writes the
new version on the next save. A migration gets a deep copy and may raise; the store then reports the
problem and validates the document as it was, field by field.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

Document = dict[str, Any]
Migration = Callable[[Document], Document]

#: Version 1 is the first released schema; nothing had to change since.
MIGRATIONS: list[Migration] = []

#: The version this code writes.
CURRENT_VERSION = len(MIGRATIONS) + 1


class MigrationError(ValueError):
    def __init__(self, version: int, cause: Exception) -> None:
        super().__init__(f"could not upgrade it from version {version}: {type(cause).__name__}: {cause}")
        self.version = version


def file_version(doc: Document) -> int:
    """The document's version; a missing or unusable one counts as 1 (the first schema)."""
    version = doc.get("version", 1)
    return version if isinstance(version, int) and not isinstance(version, bool) and version >= 1 else 1


def migrate(doc: Document, migrations: Sequence[Migration] | None = None) -> Document:
    """``doc`` brought up to ``len(migrations) + 1`` (a new dict; ``doc`` is not changed).

    A document newer than the list is returned unchanged. Raises :class:`MigrationError`."""
    steps = MIGRATIONS if migrations is None else migrations
    version = file_version(doc)
    out = copy.deepcopy(doc)
    while version <= len(steps):
        try:
            out = steps[version - 1](copy.deepcopy(out))
        except Exception as exc:
            raise MigrationError(version, exc) from exc
        version += 1
        out["version"] = version
    return out
