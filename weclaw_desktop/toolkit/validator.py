"""``weclaw validate``: the consistency checks between tools.json and the code.

Each check reports pass, warn or fail with counts and the names involved. Any fail makes the command
exit 1; the test suite runs it against the real tools.json.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from weclaw_desktop.bridges.protocols import KNOWN_BRIDGES
from weclaw_desktop.toolkit.availability import AllOf, AnyOf, BridgeReq, Not, Requirement
from weclaw_desktop.toolkit.base import BaseTool
from weclaw_desktop.toolkit.manifest import Manifest, ManifestError, load_manifest
from weclaw_desktop.toolkit.registry import (
    MAX_FUNCTION_NAME,
    RegistryError,
    ToolLoadError,
    ToolRegistry,
    function_name,
)
from weclaw_desktop.toolkit.summary import FACTS, fields

FUNCTION_NAME_RE = re.compile(r"^[A-Za-z0-9_-]+$")


class Level(StrEnum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"


@dataclass
class Check:
    name: str
    level: Level = Level.PASS
    detail: str = ""
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def finish(self, checked: int, what: str) -> Check:
        if self.problems:
            self.level = Level.FAIL
            self.detail = f"{len(self.problems)} of {checked} {what}: " + "; ".join(self.problems)
        elif self.warnings:
            self.level = Level.WARN
            self.detail = f"{checked} {what}, {len(self.warnings)} warning(s): " + "; ".join(self.warnings)
        else:
            self.detail = f"{checked} {what}"
        return self

    def line(self) -> str:
        return f"{self.level.value.upper():<4}  {self.name}: {self.detail}"


@dataclass
class Report:
    checks: list[Check]

    @property
    def ok(self) -> bool:
        return all(c.level is not Level.FAIL for c in self.checks)

    def lines(self) -> list[str]:
        return [c.line() for c in self.checks]

    def by_name(self, name: str) -> Check:
        return next(c for c in self.checks if c.name == name)


def validate_path(path: str | Path) -> Report:
    try:
        manifest = load_manifest(path)
    except ManifestError as exc:
        return Report([Check("manifest", Level.FAIL, "; ".join(exc.problems))])
    return validate_manifest(manifest)


def validate_manifest(manifest: Manifest) -> Report:
    checks = [Check("manifest", detail=f"{len(manifest.tools)} tools, {len(manifest.intents)} intents")]
    checks.append(_function_names(manifest))
    try:
        registry = ToolRegistry(manifest)
    except RegistryError as exc:
        checks.append(Check("registry", Level.FAIL, str(exc)))
        return Report(checks)
    enabled = registry.tool_names()
    classes = _modules(registry, enabled, checks)
    checks.append(_actions(registry, classes))
    checks.append(_configs(registry, classes))
    checks.append(_schemas(registry, classes))
    checks.append(_intents(manifest))
    checks.append(_reachable(manifest))
    checks.append(_references(manifest))
    checks.append(_keywords(manifest))
    checks.append(_profiles(manifest))
    checks.append(_safety(manifest, classes))
    return Report(checks)


def _function_names(manifest: Manifest) -> Check:
    check = Check("function names")
    seen: dict[str, str] = {}
    count = 0
    for tool, spec in manifest.tools.items():
        if not spec.enabled:
            continue
        for a in spec.actions:
            count += 1
            fn = function_name(tool, a)
            if len(fn) > MAX_FUNCTION_NAME:
                check.problems.append(f"{fn} is {len(fn)} characters (max {MAX_FUNCTION_NAME})")
            if not FUNCTION_NAME_RE.match(fn):
                check.problems.append(f"{fn} has characters outside [A-Za-z0-9_-]")
            if fn in seen:
                check.problems.append(f"{fn} comes from both {seen[fn]} and {tool}.{a}")
            seen[fn] = f"{tool}.{a}"
    return check.finish(count, "functions unique, <= 64 chars, [A-Za-z0-9_-]")


def _modules(registry: ToolRegistry, enabled: list[str], checks: list[Check]) -> dict[str, type[BaseTool]]:
    check = Check("modules")
    classes: dict[str, type[BaseTool]] = {}
    for tool in enabled:
        try:
            classes[tool] = registry.load_class(tool)
        except ToolLoadError as exc:
            check.problems.append(str(exc))
    checks.append(check.finish(len(enabled), "enabled tools import and are BaseTool subclasses"))
    return classes


def _actions(registry: ToolRegistry, classes: dict[str, type[BaseTool]]) -> Check:
    check = Check("actions")
    for tool, cls in classes.items():
        try:
            declared = [a.name for a in cls.action_defs()]
        except TypeError as exc:
            check.problems.append(f"{tool}: {exc}")
            continue
        listed = registry.spec(tool).actions
        if set(declared) != set(listed):
            missing = sorted(set(listed) - set(declared))
            extra = sorted(set(declared) - set(listed))
            parts = []
            if missing:
                parts.append(f"class lacks {', '.join(missing)}")
            if extra:
                parts.append(f"tools.json lacks {', '.join(extra)}")
            check.problems.append(f"{tool}: " + " and ".join(parts))
    return check.finish(len(classes), "tools whose tools.json actions equal the class's actions")


def _configs(registry: ToolRegistry, classes: dict[str, type[BaseTool]]) -> Check:
    check = Check("config")
    for tool, cls in classes.items():
        try:
            registry.build_config(tool, cls)
        except ToolLoadError as exc:
            check.problems.append(str(exc))
    return check.finish(len(classes), "tool configs valid for their Config model")


def _schemas(registry: ToolRegistry, classes: dict[str, type[BaseTool]]) -> Check:
    check = Check("parameter schemas")
    count = 0
    for tool, cls in classes.items():
        try:
            defs = cls.action_defs()
        except TypeError:
            continue  # reported by the actions check
        for a in defs:
            count += 1
            fn = function_name(tool, a.name)
            if not a.description.strip():
                check.problems.append(f"{fn} has no description")
            try:
                schema = a.parameters_schema()
            except Exception as exc:
                check.problems.append(f"{fn}: cannot build its schema: {exc}")
                continue
            for problem in openai_schema_problems(schema):
                check.problems.append(f"{fn}: {problem}")
    return check.finish(count, "action schemas valid for OpenAI function calling")


def openai_schema_problems(schema: dict[str, Any]) -> list[str]:
    """What would make an OpenAI-compatible endpoint reject this ``parameters`` schema."""
    problems: list[str] = []
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        problems.append(f"not a valid JSON Schema: {exc.message}")
    if schema.get("type") != "object":
        problems.append("top level must be {'type': 'object'}")
    if not isinstance(schema.get("properties"), dict):
        problems.append("top level needs 'properties'")
    if schema.get("additionalProperties") is not False:
        problems.append("top level must set additionalProperties: false")

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            if "$ref" in node or "$defs" in node:
                problems.append(f"{path}: $ref/$defs are not inlined")
            extra = node.get("additionalProperties")
            declared = bool(node.get("properties"))
            if node.get("type") == "object" and declared and extra is not False:
                problems.append(f"{path}: objects with properties must set additionalProperties: false")
            for key, value in node.items():
                walk(value, f"{path}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}[{i}]")

    walk(schema, "parameters")
    return problems


def _intents(manifest: Manifest) -> Check:
    check = Check("intents")
    for name, intent in manifest.intents.items():
        for tool in intent.tools:
            if tool not in manifest.tools:
                check.problems.append(f"intent {name} references unknown tool '{tool}'")
            elif not manifest.tools[tool].enabled:
                check.warnings.append(f"intent {name} references disabled tool '{tool}'")
        for field_name in ("recommended", "alternative"):
            stray = sorted(set(getattr(intent, field_name)) - set(intent.tools))
            if stray:
                check.problems.append(f"intent {name}: {field_name} not in its tools: {', '.join(stray)}")
        overlap = sorted(set(intent.recommended) & set(intent.alternative))
        if overlap:
            check.warnings.append(f"intent {name}: both recommended and alternative: {', '.join(overlap)}")
    return check.finish(len(manifest.intents), "intents reference existing tools consistently")


def _reachable(manifest: Manifest) -> Check:
    check = Check("reachability")
    routed = {t for intent in manifest.intents.values() for t in intent.tools}
    enabled = [t for t, s in manifest.tools.items() if s.enabled]
    for tool in enabled:
        if tool not in routed and not manifest.tools[tool].always_on:
            check.problems.append(f"{tool} is in no intent and not always_on")
    return check.finish(len(enabled), "enabled tools reachable from an intent or always on")


def _bridges_in(req: Requirement | None) -> list[str]:
    if req is None:
        return []
    if isinstance(req, BridgeReq):
        return [req.bridge]
    if isinstance(req, AllOf):
        return [b for sub in req.all_of for b in _bridges_in(sub)]
    if isinstance(req, AnyOf):
        return [b for sub in req.any_of for b in _bridges_in(sub)]
    if isinstance(req, Not):
        return _bridges_in(req.not_)
    return []


def _references(manifest: Manifest) -> Check:
    check = Check("references")
    count = 0
    for tool, spec in manifest.tools.items():
        for bridge in [*spec.bridges, *_bridges_in(spec.requires)]:
            count += 1
            if bridge not in KNOWN_BRIDGES:
                check.problems.append(f"{tool} needs unknown bridge '{bridge}'")
        for dep in spec.depends_on:
            count += 1
            if dep not in manifest.tools:
                check.problems.append(f"{tool} depends on unknown tool '{dep}'")
            elif not manifest.tools[dep].enabled and spec.enabled:
                check.problems.append(f"{tool} depends on disabled tool '{dep}'")
    return check.finish(count, "bridge and depends_on references exist")


# Marker units the request preparation and the conversation context produce (intent/text.py and
# intent/conversation.py); a keyword naming any other ‹…› can never match.
MARKERS = frozenset(
    [
        "‹path›",
        "‹url›",
        "‹email›",
        "‹quote›",
        "‹code›",
        "‹pycode›",
        "‹paste›",
        "‹math›",
        "‹clock›",
        "‹date›",
        "‹archive›",
        "‹data›",
        "‹pyscript›",
        "‹shscript›",
        "‹ref›",
        "‹draft›",
        "‹text›",
    ]
)


def _keywords(manifest: Manifest) -> Check:
    """Every intent has action phrases in both languages (a request in either language can route on its
    own); phrases are non-empty, not repeated, not both an action phrase and a topic word of one intent,
    and name only markers that exist."""
    import re

    check = Check("keywords")
    owners: dict[str, list[str]] = {}
    count = 0
    for name, intent in manifest.intents.items():
        for lang in ("zh", "en"):
            if not [w for w in getattr(intent.action_phrases, lang) if w.strip()]:
                check.problems.append(f"intent {name} has no action phrase in {lang} (action_phrases.{lang})")
        actions = [w.strip().lower() for w in intent.action_phrases.all()]
        topics = [w.strip().lower() for w in intent.topics.all()]
        words = actions + topics
        count += len(words)
        if any(not w for w in words):
            check.problems.append(f"intent {name} has an empty keyword")
        dupes = sorted(w for w, n in Counter(words).items() if n > 1 and w)
        both = sorted(set(actions) & set(topics))
        if both:
            check.problems.append(f"intent {name}: both an action phrase and a topic: {', '.join(both)}")
        dupes = [w for w in dupes if w not in both]
        if dupes:
            check.problems.append(f"intent {name} repeats: {', '.join(dupes)}")
        unknown = sorted({m for w in words for m in re.findall(r"‹[^›]*›", w)} - MARKERS)
        if unknown:
            check.problems.append(f"intent {name} names unknown markers: {', '.join(unknown)}")
        for w in set(actions):
            owners.setdefault(w, []).append(name)
    shared = {w: o for w, o in owners.items() if len(o) > 1 and w}
    for word, intents in sorted(shared.items())[:10]:
        check.warnings.append(f"action phrase '{word}' in {', '.join(intents)}")
    return check.finish(count, "action phrases in zh and en for every intent, keywords unique, markers known")


def _profiles(manifest: Manifest) -> Check:
    from fnmatch import fnmatchcase

    check = Check("profiles")
    for name, patterns in manifest.profiles.items():
        for pattern in patterns:
            if not any(fnmatchcase(t, pattern) for t in manifest.tools):
                check.warnings.append(f"profile {name}: '{pattern}' matches no tool")
    return check.finish(len(manifest.profiles), "profiles")


def _safety(manifest: Manifest, classes: dict[str, type[BaseTool]]) -> Check:
    """tools.json's trust and effects declarations (#13): present for every enabled tool, naming real
    arguments, declared path classes and known summary facts."""
    check = Check("safety")
    known_classes = set(manifest.safety.paths)
    count = 0
    for tool, spec in manifest.tools.items():
        if not spec.enabled:
            continue
        count += 1
        if spec.safety is None:
            check.warnings.append(f"{tool} declares no 'safety' (its results count as trusted, with no effects)")
            continue
        params = _params_by_action(classes.get(tool))
        for action_name in spec.actions:
            decl = spec.safety.of(action_name)
            where = f"{tool}.{action_name}"
            names = params.get(action_name)
            wanted = [*(decl.paths or [])]
            for effect in decl.effects or []:
                wanted += [*effect.args, *effect.urls]
                for cls_name in effect.paths_in:
                    if cls_name not in known_classes:
                        check.problems.append(f"{where}: effect {effect.effect} names unknown path class '{cls_name}'")
                if effect.paths_in and not (effect.args or decl.paths):
                    check.problems.append(f"{where}: effect {effect.effect} has paths_in but no path arguments")
            for cls_name in decl.untrusted_in:
                if cls_name not in known_classes:
                    check.problems.append(f"{where}: untrusted_in names unknown path class '{cls_name}'")
            if decl.summary is not None:
                for fact, arg in fields(decl.summary):
                    if fact not in FACTS:
                        check.problems.append(
                            f"{where}: summary uses unknown fact '{fact}' (known: {', '.join(sorted(FACTS))})"
                        )
                    wanted.append(arg)
            if names is not None:
                for arg in sorted(set(wanted) - names):
                    check.problems.append(f"{where}: safety names argument '{arg}', which the action does not have")
    return check.finish(count, "tools declare trust and effects consistently")


def _params_by_action(cls: type[BaseTool] | None) -> dict[str, set[str]]:
    if cls is None:
        return {}
    try:
        return {a.name: set(a.params.model_fields) for a in cls.action_defs()}
    except TypeError:
        return {}
