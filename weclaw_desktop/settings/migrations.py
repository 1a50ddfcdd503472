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
from urllib.parse import urlparse

Document = dict[str, Any]
Migration = Callable[[Document], Document]


def provider_name(entry: dict[str, Any]) -> str:
    """A name for a configuration that had none: its preset, else its endpoint's host, else "default"."""
    preset = entry.get("preset")
    if isinstance(preset, str) and preset and preset != "custom":
        return preset[:40]
    url = entry.get("base_url")
    host = urlparse(url).hostname if isinstance(url, str) else None
    return (host or "default")[:40]


def provider_list(single: Any) -> dict[str, Any]:
    """The ``providers`` section holding one configuration (a version-1 ``provider`` section)."""
    if not isinstance(single, dict):  # not an object: the loader reports the entry as the value found
        return {"entries": [single]}
    entry = dict(single)
    if not isinstance(entry.get("name"), str) or not entry.get("name"):
        entry["name"] = provider_name(entry)
    return {"active": entry["name"], "entries": [entry]}


def v1_to_v2_provider_list(doc: Document) -> Document:
    """v1 -> v2: the single ``provider`` section became ``providers`` = {active, entries: [that one]}.

    The entry keeps every key it had (its keyring entry name ``api_key_name`` too, so the stored key is still
    found); it gets a ``name``. A document that already has ``providers`` keeps it, and an old ``provider``
    beside it is left alone (kept as an unknown key, never merged)."""
    if "provider" in doc and "providers" not in doc:
        doc["providers"] = provider_list(doc.pop("provider"))
    return doc


#: ``MIGRATIONS[i]`` turns version i + 1 into i + 2. Append only.
MIGRATIONS: list[Migration] = [v1_to_v2_provider_list]

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
