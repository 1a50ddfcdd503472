"""From the JSON document of settings.json to :class:`Settings`, field by field.

Each field is validated alone. One that cannot be used falls back by itself (to its default, or to the
stricter value of ``fallbacks.FALLBACKS`` for a restriction); for a nested model that is not even an
object, the model falls back as a whole (the smallest enclosing field that can). Approval rules are
checked cell by cell and ``mcp_servers`` entry by entry (``mcp_entries``). Keys this version does not
know are noted, never dropped (the store writes them back). Every problem is a :class:`SettingsProblem`
with a dotted path; every fallback records which fields it set (:class:`Restore`) so the store can write
the user's original back as long as nobody changed those fields.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from weclaw_desktop.settings import fallbacks as fb
from weclaw_desktop.settings.mcp_entries import parse_servers
from weclaw_desktop.settings.migrations import CURRENT_VERSION, Migration, MigrationError, file_version, migrate
from weclaw_desktop.settings.problems import ProblemKind, SettingsProblem, shown
from weclaw_desktop.settings.schema import Settings

Path_ = tuple[str, ...]


@dataclass(frozen=True)
class Restore:
    """A fallback in use: ``path`` could not be read and the fallback set ``fallback`` (path -> value as
    dumped). While the settings still hold exactly these values, a save writes the file's original
    values of these paths back (the problem stays, and so does the user's text)."""

    path: Path_
    fallback: dict[Path_, Any]


@dataclass
class Loaded:
    settings: Settings
    problems: list[SettingsProblem] = field(default_factory=list)
    restores: list[Restore] = field(default_factory=list)
    document: dict[str, Any] | None = None  # as read (and migrated); None when it could not be read


def dotted(path: Path_) -> str:
    return ".".join(path)


def get_path(doc: Any, path: Path_) -> Any:
    """The value at ``path`` in a nested dict, or :data:`MISSING`."""
    for key in path:
        if not isinstance(doc, dict) or key not in doc:
            return MISSING
        doc = doc[key]
    return doc


MISSING: Any = object()


def submodel(annotation: Any) -> type[BaseModel] | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    inner = [f"item {p}" if isinstance(p, int) else str(p) for p in err["loc"][1:]]
    where = f"{', '.join(inner)}: " if inner else ""
    return where + err["msg"].removeprefix("Value error, ")


class _Loader:
    def __init__(self, ctx: fb.Context) -> None:
        self.ctx = ctx
        self.problems: list[SettingsProblem] = []
        self.pending: list[tuple[Path_, list[Path_]]] = []  # (problem path, paths its fallback set)

    # --- recording ------------------------------------------------------------------------------
    def invalid(self, path: Path_, message: str, used: str, effects: tuple[str, ...], sets: list[Path_]) -> None:
        self.problems.append(SettingsProblem(dotted(path), ProblemKind.INVALID, message, used, effects, kept=True))
        self.pending.append((path, sets))

    def note_unknown(self, path: str) -> None:
        self.problems.append(
            SettingsProblem(path, ProblemKind.UNKNOWN, "not a setting of this version", "kept in the file, not used")
        )

    # --- models ---------------------------------------------------------------------------------
    def model(self, cls: type[BaseModel], raw: dict[str, Any], path: Path_) -> BaseModel:
        values: dict[str, Any] = {}
        failed: list[tuple[str, str]] = []
        known = {name for name, f in cls.model_fields.items() if not f.exclude}
        for name in known:
            if name not in raw:
                continue
            value = raw[name]
            fpath = (*path, name)
            custom = CUSTOM.get(fpath)
            if custom is not None:
                custom(self, value, fpath, values)
                continue
            sub = submodel(cls.model_fields[name].annotation)
            if sub is not None:
                if isinstance(value, dict):
                    values[name] = self.model(sub, value, fpath)
                else:
                    failed.append((name, f"expected an object, found {shown(value)}"))
                continue
            try:
                checked = cls.__pydantic_validator__.validate_assignment(cls.model_construct(), name, value)
            except ValidationError as exc:
                failed.append((name, f"{_first_error(exc)} (found {shown(value)})"))
            else:
                values[name] = getattr(checked, name)
        for key in raw:
            if key not in known:
                self.note_unknown(dotted((*path, key)))
        for name, message in failed:
            self._fall_back(cls, name, message, path, values)
        return cls.model_validate(values)

    def _fall_back(self, cls: type[BaseModel], name: str, message: str, path: Path_, values: dict[str, Any]) -> None:
        fpath = (*path, name)
        before = dict(values)
        rule = fb.FALLBACKS.get(fpath)
        sub = submodel(cls.model_fields[name].annotation)
        effects: tuple[str, ...]
        if rule is not None:
            used, effects = rule.apply(values, self.ctx), (rule.effect,) if rule.effect else ()
        elif sub is not None and self.has_fallbacks(fpath):
            values[name], effects = self.strict(sub, fpath)
            used = "using its defaults, stricter where it restricts something"
        else:
            default = cls.model_fields[name].get_default(call_default_factory=True)
            plain = default.model_dump(mode="json") if isinstance(default, BaseModel) else default
            used = f"using the default {shown(plain)}"
            effects = ()
        sets = [fpath] + [(*path, k) for k in values if k != name and (k not in before or values[k] is not before[k])]
        self.invalid(fpath, message, used, effects, sets)

    @staticmethod
    def has_fallbacks(path: Path_) -> bool:
        return any(key[: len(path)] == path and len(key) > len(path) for key in fb.FALLBACKS)

    def strict(self, cls: type[BaseModel], path: Path_) -> tuple[BaseModel, tuple[str, ...]]:
        """``cls`` with defaults, and the fail-closed value for every restriction inside it."""
        values: dict[str, Any] = {}
        effects: list[str] = []
        for name, f in cls.model_fields.items():
            fpath = (*path, name)
            rule = fb.FALLBACKS.get(fpath)
            sub = submodel(f.annotation)
            if rule is not None:
                rule.apply(values, self.ctx)
                effects += [rule.effect] if rule.effect else []
            elif sub is not None and self.has_fallbacks(fpath):
                values[name], inner = self.strict(sub, fpath)
                effects += inner
        return cls.model_validate(values), tuple(dict.fromkeys(effects))


# --- fields checked by their own rules ---------------------------------------------------------------
def _rules(loader: _Loader, value: Any, path: Path_, values: dict[str, Any]) -> None:
    """Approval rules, cell by cell: a cell that cannot be read gets the stricter rule alone."""
    effect = ("approvals-strict",)
    if not isinstance(value, dict):
        values["rules"] = fb.strict_rules()
        loader.invalid(path, f"expected an object, found {shown(value)}", "using the stricter rules", effect, [path])
        return
    rules: dict[str, dict[str, Any]] = {}
    for origin, cells in value.items():
        opath = (*path, origin)
        if not isinstance(cells, dict):
            rules[origin] = fb.strict_cells(origin)
            message = f"expected an object, found {shown(cells)}"
            loader.invalid(opath, message, "using the stricter rules for it", effect, [opath])
            continue
        rules[origin] = {}
        for risk, rule in cells.items():
            if rule in fb.STRICTNESS:
                rules[origin][risk] = rule
                continue
            strict = fb.strict_rule(origin, risk)
            rules[origin][risk] = strict
            cpath = (*opath, risk)
            message = f"must be allow, ask or deny (found {shown(rule)})"
            loader.invalid(cpath, message, f"using {strict}", effect if strict != "allow" else (), [cpath])
    values["rules"] = rules


def _servers(loader: _Loader, value: Any, path: Path_, values: dict[str, Any]) -> None:
    if not isinstance(value, list):
        values["mcp_servers"] = []
        loader.invalid(path, f"expected a list, found {shown(value)}", "using no MCP servers", (), [path])
        return
    parsed = parse_servers(value)
    values["mcp_servers"] = parsed.valid
    values["mcp_invalid"] = parsed.invalid
    for entry in parsed.invalid:
        message = (f"server '{entry.name}': " if entry.name else "") + entry.error
        where = f"mcp_servers[{entry.index}]"
        loader.problems.append(SettingsProblem(where, ProblemKind.MCP_ENTRY, message, "not started", kept=True))
    for index, key in parsed.unknown:
        loader.note_unknown(f"mcp_servers[{index}].{key}")


Custom = Callable[[_Loader, Any, Path_, dict[str, Any]], None]
CUSTOM: dict[Path_, Custom] = {("agent", "approvals", "rules"): _rules, ("mcp_servers",): _servers}


# --- entry points --------------------------------------------------------------------------------------
def unreadable(message: str, ctx: fb.Context) -> Loaded:
    """The whole file cannot be used: every field default, every restriction strict."""
    loader = _Loader(ctx)
    settings, effects = loader.strict(Settings, ())
    assert isinstance(settings, Settings)
    used = "using the defaults, stricter for every restriction"
    problem = SettingsProblem("", ProblemKind.UNREADABLE, message, used, effects)
    return Loaded(settings=settings, problems=[problem])


def parse_text(text: str, ctx: fb.Context, migrations: list[Migration] | None = None) -> Loaded:
    try:
        doc = json.loads(text)
    except ValueError as exc:
        where = f" at line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        return unreadable(f"not valid JSON{where}: {reason}", ctx)
    return load_document(doc, ctx, migrations)


def load_document(doc: Any, ctx: fb.Context, migrations: list[Migration] | None = None) -> Loaded:
    if not isinstance(doc, dict):
        return unreadable(f"expected a JSON object, found {shown(doc, 30)}", ctx)
    notes: list[SettingsProblem] = []
    newest = CURRENT_VERSION if migrations is None else len(migrations) + 1
    version = file_version(doc)
    if version > newest:
        message = f"written by a newer WeClaw (settings version {version}; this one knows {newest})"
        notes.append(SettingsProblem("version", ProblemKind.NEWER, message, "what it added is kept"))
    try:
        doc = migrate(doc, migrations)
    except MigrationError as exc:
        notes.append(SettingsProblem("version", ProblemKind.INVALID, str(exc), "reading it as it is"))
    loader = _Loader(ctx)
    settings = loader.model(Settings, {k: v for k, v in doc.items() if k != "version"}, ())
    assert isinstance(settings, Settings)
    settings.version = max(version, newest)
    dump = settings.model_dump(mode="json")
    restores = [Restore(path, {p: get_path(dump, p) for p in sets}) for path, sets in loader.pending]
    return Loaded(settings=settings, problems=notes + loader.problems, restores=restores, document=doc)
