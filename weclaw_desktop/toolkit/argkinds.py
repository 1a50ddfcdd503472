"""What an argument *is*, declared on the tool's parameter model, so generic code can treat it right.

A parameter that names a file or folder is declared with :data:`PathStr` (or ``list[PathStr]``)::

    class ReadParams(BaseModel):
        path: PathStr = Field(description="The file to read.")

The marker is pydantic metadata: the JSON Schema the model sees is unchanged. :func:`path_fields` finds
the declared fields of a model, and :func:`canonical_path` spells a path the one way the loop guard
compares it: ``~/./x``, ``~//x``, ``x`` (relative to the home folder) and ``/home/me/x`` are the same call.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel


class ArgKind:
    """A marker for ``Annotated[...]`` metadata."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"ArgKind({self.name!r})"


PATH = ArgKind("path")
PathStr = Annotated[str, PATH]

Shape = Literal["one", "many"]


def _is_path(annotation: Any) -> bool:
    return get_origin(annotation) is Annotated and any(m is PATH for m in annotation.__metadata__)


def _shape(annotation: Any) -> Shape | None:
    if _is_path(annotation):
        return "one"
    origin = get_origin(annotation)
    if origin in (list, tuple, set, Sequence, frozenset):
        if any(_is_path(a) for a in get_args(annotation)):
            return "many"
        return None
    if origin is Union or (sys.version_info >= (3, 10) and type(annotation).__name__ == "UnionType"):
        shapes = {s for a in get_args(annotation) if (s := _shape(a)) is not None}
        return "many" if "many" in shapes else ("one" if shapes else None)
    return None


@cache
def path_fields(model: type[BaseModel]) -> dict[str, Shape]:
    """The fields of ``model`` declared as paths (by their name and alias): one path or a list of paths."""
    found: dict[str, Shape] = {}
    for name, info in model.model_fields.items():
        shape: Shape | None = "one" if any(m is PATH for m in info.metadata) else _shape(info.annotation)
        if shape is not None:
            found[name] = shape
            if info.alias:
                found[info.alias] = shape
    return found


def canonical_path(raw: str, base: Path) -> str:
    """One spelling of a path: quotes and ``file://`` removed, ``~`` expanded, relative to ``base``,
    ``.``/``..``/``//`` folded, symlinks resolved, case folded where the file system ignores case."""
    text = raw.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    if text.startswith("file://"):
        from urllib.parse import unquote, urlparse

        text = unquote(urlparse(text).path)
    expanded = os.path.expanduser(text)
    path = Path(expanded)
    if not path.is_absolute():
        path = base / path
    try:
        resolved = os.path.realpath(path)
    except (OSError, ValueError):
        resolved = os.path.normpath(path)
    return resolved.casefold() if sys.platform in ("win32", "darwin") else resolved


def canonical_arguments(arguments: dict[str, Any], fields: dict[str, Shape], base: Path) -> dict[str, Any]:
    """``arguments`` with the declared path fields in canonical form (other values untouched)."""
    if not fields:
        return arguments
    out = dict(arguments)
    for name, shape in fields.items():
        value = out.get(name)
        if shape == "one" and isinstance(value, str) and value.strip():
            out[name] = canonical_path(value, base)
        elif shape == "many" and isinstance(value, list):
            out[name] = [canonical_path(v, base) if isinstance(v, str) and v.strip() else v for v in value]
    return out
