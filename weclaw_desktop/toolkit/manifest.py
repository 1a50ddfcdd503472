"""tools.json: the one declaration of every tool, its routing, and the exposure settings.

The models are strict: an unknown key is an error that names the key, where it is, and the closest valid
key. ``resources/schema/tools.schema.json`` is generated from these models (``weclaw schema``) and a test
fails when the committed copy is stale.
"""

from __future__ import annotations

import difflib
import json
import re
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from weclaw_desktop.i18n import is_chinese
from weclaw_desktop.toolkit.availability import Requirement
from weclaw_desktop.toolkit.base import Risk

SCHEMA_REF = "./resources/schema/tools.schema.json"
TOOL_NAME_PATTERN = r"^[a-z][a-z0-9_]*$"


class ManifestError(ValueError):
    """tools.json could not be read or is invalid. The message lists every problem with its path."""

    def __init__(self, problems: list[str], source: str = "tools.json") -> None:
        self.problems = problems
        self.source = source
        super().__init__(f"{source} is invalid:\n" + "\n".join(f"  - {p}" for p in problems))


class StrictModel(BaseModel):
    """Rejects unknown keys with the closest valid one, instead of pydantic's generic message."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    #: keys that were renamed: old name -> the message that says what to use now
    renamed: ClassVar[dict[str, str]] = {}

    @model_validator(mode="before")
    @classmethod
    def _unknown_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        valid: list[str] = []
        for name, info in cls.model_fields.items():
            valid.append(info.alias or name)
        allowed = set(valid) | set(cls.model_fields)
        unknown = [key for key in data if key not in allowed]
        if unknown:
            msgs = []
            for key in unknown:
                if key in cls.renamed:
                    msgs.append(f"'{key}' {cls.renamed[key]}")
                    continue
                close = difflib.get_close_matches(str(key), valid, n=1, cutoff=0.5)
                hint = f"; did you mean '{close[0]}'?" if close else f"; valid keys: {', '.join(valid)}"
                msgs.append(f"unknown key '{key}'{hint}")
            raise ValueError("; ".join(msgs))
        return data


class LocalizedText(StrictModel):
    en: str
    zh: str = ""

    def get(self, lang: str) -> str:
        return (self.zh if is_chinese(lang) else self.en) or self.en


class Display(StrictModel):
    name: LocalizedText
    icon: str = "tool"
    category: str = "general"
    actions: dict[str, LocalizedText] = Field(
        default_factory=dict, description="What people call each action (the chat's tool cards show it)"
    )
    monospace: bool = Field(default=False, description="Show the tool's output in a fixed-width font (commands, code)")


_SIGNAL_KEYS = ["bridge", "config", "secret", "env", "module", "platform", "allOf", "anyOf", "not"]


def _check_requirement(data: Any, path: str = "requires") -> None:
    """Friendly errors for availability expressions before pydantic tries every union member."""
    if not isinstance(data, dict):
        raise ValueError(f'{path} must be an object such as {{"bridge": "companion"}}')
    keys = [k for k in data if k != "package"]
    if len(keys) != 1:
        raise ValueError(f"{path} must have exactly one of {', '.join(_SIGNAL_KEYS)}; got {sorted(data)}")
    key = keys[0]
    if key not in _SIGNAL_KEYS:
        close = difflib.get_close_matches(key, _SIGNAL_KEYS, n=1, cutoff=0.5)
        hint = f"; did you mean '{close[0]}'?" if close else f"; valid: {', '.join(_SIGNAL_KEYS)}"
        raise ValueError(f"unknown key '{key}' in {path}{hint}")
    if "package" in data and key != "module":
        raise ValueError(f"'package' in {path} only goes with 'module'")
    if key in ("allOf", "anyOf"):
        items = data[key]
        if not isinstance(items, list) or not items:
            raise ValueError(f"{path}.{key} must be a non-empty list")
        for i, sub in enumerate(items):
            _check_requirement(sub, f"{path}.{key}[{i}]")
    elif key == "not":
        _check_requirement(data[key], f"{path}.not")


class Effect(StrEnum):
    """What an action can do that matters once untrusted content is in the conversation (#13)."""

    READS_PRIVATE_DATA = "reads-private-data"  # credentials, the clipboard, the screen, earlier chats
    SENDS_DATA_OUT = "sends-data-out"  # egress: a request to an address the user did not write, e-mail, the phone
    PERSISTS = "persists"  # changes what runs later: startup files, autostart, cron, PATH, ~/.ssh, git hooks


class Trust(StrEnum):
    """Whether a tool's results may carry someone else's instructions (a web page, an MCP server, a file
    from the phone, the clipboard) or only what the user's own computer and choices produced."""

    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"


class EffectDecl(StrictModel):
    """One effect of an action. Without ``paths_in`` / ``urls`` it always holds."""

    effect: Effect
    paths_in: list[str] = Field(
        default_factory=list,
        description="Holds only when a path argument lies in one of these path classes (safety.paths)",
    )
    args: list[str] = Field(
        default_factory=list, description="The path arguments paths_in looks at (default: the action's 'paths')"
    )
    urls: list[str] = Field(
        default_factory=list,
        description="Arguments holding URLs or addresses: holds unless each was written by the user in this chat",
    )

    @model_validator(mode="after")
    def _one_condition(self) -> EffectDecl:
        if self.paths_in and self.urls:
            raise ValueError("an effect has either paths_in or urls, not both")
        if self.args and not self.paths_in:
            raise ValueError("'args' only goes with 'paths_in'")
        return self


class ActionSafety(StrictModel):
    """An action's trust and effects; a field left out takes the tool's value."""

    paths: list[str] | None = Field(
        default=None, description="Arguments that hold a path or a list of paths (folder scopes, summaries)"
    )
    results: Trust | None = Field(default=None, description="Whether the results may carry others' instructions")
    untrusted_in: list[str] = Field(
        default_factory=list, description="Results are untrusted when a path argument lies in one of these classes"
    )
    source: LocalizedText | None = Field(
        default=None, description="What the chat did, for the approval reason ('read a web page')"
    )
    effects: list[EffectDecl] | None = None
    summary: LocalizedText | None = Field(
        default=None,
        description="Plain words for the approval dialog; {fact:argument} fields, e.g. 'delete {count:path} in {parent:path}'",
    )


class ToolSafety(ActionSafety):
    """A tool's safety declaration: defaults for its actions, and per-action overrides."""

    actions: dict[str, ActionSafety] = Field(default_factory=dict)

    def of(self, action: str) -> ActionSafety:
        """The action's declaration with the tool's values filled in."""
        own = self.actions.get(action)
        base = ActionSafety(
            paths=self.paths,
            results=self.results,
            untrusted_in=self.untrusted_in,
            source=self.source,
            effects=self.effects,
            summary=self.summary,
        )
        if own is None:
            return base
        # only what the action set explicitly replaces the tool's value (as model objects, not dicts)
        return base.model_copy(update={name: getattr(own, name) for name in own.model_fields_set})


class PathClass(StrictModel):
    """A class of paths, per platform. Entries: '~/...' or '{place}/...' prefixes (a path is the entry or
    inside it), 'name:GLOB' (the file name matches), '**/a/b' (the parts a/b appear anywhere in the path).
    Places: {PATH} (each folder on PATH), {data}, {config}, {logs}, {cache}, {incoming}, {outputs},
    {xdg_config}, {xdg_data}, {appdata}, {localappdata}, {programdata}."""

    label: LocalizedText
    any: list[str] = Field(default_factory=list)
    linux: list[str] = Field(default_factory=list)
    darwin: list[str] = Field(default_factory=list)
    windows: list[str] = Field(default_factory=list)

    def entries(self, platform: str) -> list[str]:
        key = "windows" if platform.startswith("win") else "darwin" if platform == "darwin" else "linux"
        return [*self.any, *getattr(self, key)]


class CommandHint(StrictModel):
    """A shell or Python snippet matching ``pattern`` (a case-insensitive regex) is described by ``phrase``."""

    pattern: str
    phrase: LocalizedText

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"pattern {value!r} is not a valid regular expression: {exc}") from None
        return value


def _all_effects() -> list[Effect]:
    return list(Effect)


class SafetyRules(StrictModel):
    """The provenance rule and the data it uses, declared once."""

    after_untrusted: list[Effect] = Field(
        default_factory=_all_effects,
        description="Once untrusted content is in the conversation, calls with these effects always ask the user",
    )
    paths: dict[str, PathClass] = Field(default_factory=dict)
    commands: list[CommandHint] = Field(default_factory=list)


def secrets_in(requirement: Any) -> set[str]:
    """The keyring entries an availability expression asks for."""
    if requirement is None:
        return set()
    data = requirement.model_dump(by_alias=True) if isinstance(requirement, BaseModel) else requirement
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("secret"), str):
                found.add(node["secret"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(data)
    return found


class ToolSpec(StrictModel):
    """One tool's declaration."""

    module: str = Field(description="Python module that defines the tool class")
    class_name: str = Field(alias="class", description="Name of the BaseTool subclass in the module")
    enabled: bool = True
    actions: list[str] = Field(min_length=1, description="Must equal the actions the class defines")
    description: LocalizedText = Field(description="One line: what the tool is for (tool_search shows it)")
    display: Display
    risk: Risk = Risk.LOW
    action_risk: dict[str, Risk] = Field(default_factory=dict)
    timeout_s: float = Field(default=60.0, gt=0, le=86400)
    concurrency: int = Field(default=4, ge=1, le=64, description="Calls of this tool that may run at once")
    bridges: list[str] = Field(default_factory=list)
    requires: Requirement | None = None
    action_requires: dict[str, Requirement] = Field(
        default_factory=dict, description="Extra availability per action (e.g. an optional dependency)"
    )
    config: dict[str, Any] = Field(default_factory=dict)
    secrets: dict[str, LocalizedText] = Field(
        default_factory=dict,
        description="Keyring entries the tool reads (name -> what people call it); Settings > Tools asks for them",
    )
    depends_on: list[str] = Field(default_factory=list, description="Tools exposed together with this one")
    always_on: bool = Field(default=False, description="Exposed with every request (meta tools)")
    safety: ToolSafety | None = Field(
        default=None, description="Trust of the results and effects of the actions (None: trusted, no effects)"
    )

    @field_validator("requires", mode="before")
    @classmethod
    def _requires_shape(cls, value: Any) -> Any:
        if value is not None:
            _check_requirement(value)
        return value

    @field_validator("action_requires", mode="before")
    @classmethod
    def _action_requires_shape(cls, value: Any) -> Any:
        if isinstance(value, dict):
            for action_name, req in value.items():
                _check_requirement(req, f"action_requires.{action_name}")
        return value

    @model_validator(mode="after")
    def _action_risk_keys(self) -> ToolSpec:
        for field_name in ("action_risk", "action_requires"):
            stray = sorted(set(getattr(self, field_name)) - set(self.actions))
            if stray:
                raise ValueError(f"{field_name} names actions that are not in 'actions': {', '.join(stray)}")
        if self.safety is not None:
            stray = sorted(set(self.safety.actions) - set(self.actions))
            if stray:
                raise ValueError(f"safety.actions names actions that are not in 'actions': {', '.join(stray)}")
        stray = sorted(set(self.display.actions) - set(self.actions))
        if stray:
            raise ValueError(f"display.actions names actions that are not in 'actions': {', '.join(stray)}")
        if len(set(self.actions)) != len(self.actions):
            raise ValueError("'actions' lists an action twice")
        return self

    def risk_of(self, action: str) -> Risk:
        return self.action_risk.get(action, self.risk)

    def all_secrets(self) -> dict[str, LocalizedText]:
        """Every keyring entry the tool uses: the declared ones, and those its availability asks for."""
        out = dict(self.secrets)
        for req in [self.requires, *self.action_requires.values()]:
            for name in sorted(secrets_in(req)):
                out.setdefault(name, LocalizedText(en=name))
        return out


class Keywords(StrictModel):
    zh: list[str] = Field(default_factory=list)
    en: list[str] = Field(default_factory=list)

    def all(self) -> list[str]:
        return [*self.zh, *self.en]


class IntentSpec(StrictModel):
    """One intent: how people ask for it, which tools serve it, and in which order of preference.

    Keywords carry a role. An action phrase asks for the intent's action ("remind me", "压缩成", "send * to
    my phone", "what's on my clipboard"): one is enough to route. A topic word names the domain
    ("python", "邮件", "battery", "remember"): it supports an action or a request about the user's things,
    reaches the medium tier at most alone, and does not count in a question or a writing request."""

    renamed: ClassVar[dict[str, str]] = {
        "keywords": "is now 'action_phrases' (phrases that alone ask for the intent's action)",
        "weak": "is now 'topics' (words that name the domain; weak alone)",
    }

    action_phrases: Keywords = Field(
        description="Phrases that alone ask for the intent's action (strong): verbs with their objects, "
        "lookups of the user's state. '*' allows a short gap ('发*手机'); ‹path›, ‹url›, ‹email›, ‹code›, "
        "‹pycode›, ‹draft›, ‹clock›, ... stand for masked payloads and earlier results"
    )
    topics: Keywords = Field(
        default_factory=Keywords,
        description="Words that name the domain ('python', '邮件', 'battery'): they support an action or a "
        "request about the user's things, alone reach the medium tier at most, and count for nothing in a "
        "question or a writing request",
    )
    tools: list[str] = Field(min_length=1)
    recommended: list[str] = Field(min_length=1)
    alternative: list[str] = Field(default_factory=list)
    examples: Keywords = Field(default_factory=Keywords)
    description: str = ""


class ExposureSettings(StrictModel):
    """How many tools a request may see, and when routing is confident enough."""

    mode: Literal["progressive", "all"] = "progressive"
    high_threshold: float = Field(default=0.6, ge=0, le=1)
    medium_threshold: float = Field(default=0.3, ge=0, le=1)
    max_tools_per_request: int = Field(default=6, ge=1, le=128)
    max_functions: int = Field(default=128, ge=1, le=128)
    sticky_turns: int = Field(default=2, ge=0, le=10)
    search_results: int = Field(default=5, ge=1, le=20)
    similarity_weight: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="How far the paraphrase (similarity) signal alone can raise a score; 0 = off",
    )

    @model_validator(mode="after")
    def _order(self) -> ExposureSettings:
        if self.medium_threshold > self.high_threshold:
            raise ValueError("medium_threshold must not exceed high_threshold")
        return self


class Manifest(StrictModel):
    schema_ref: str | None = Field(default=None, alias="$schema")
    version: Literal[1] = 1
    tools: dict[str, ToolSpec]
    intents: dict[str, IntentSpec] = Field(default_factory=dict)
    profiles: dict[str, list[str]] = Field(default_factory=lambda: {"full": ["*"]})
    exposure: ExposureSettings = Field(default_factory=ExposureSettings)
    safety: SafetyRules = Field(default_factory=SafetyRules)

    @field_validator("tools")
    @classmethod
    def _tool_names(cls, tools: dict[str, ToolSpec]) -> dict[str, ToolSpec]:
        import re

        bad = [name for name in tools if not re.match(TOOL_NAME_PATTERN, name)]
        if bad:
            raise ValueError(f"tool names must match {TOOL_NAME_PATTERN}: {', '.join(bad)}")
        return tools


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ManifestError([f"key '{key}' appears twice in the same object"])
        out[key] = value
    return out


def format_validation_error(exc: ValidationError) -> list[str]:
    problems = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"] if not str(p).startswith("function-"))
        msg = err["msg"].removeprefix("Value error, ")
        problems.append(f"{loc}: {msg}" if loc else msg)
    return problems


def parse_manifest(text: str, source: str = "tools.json") -> Manifest:
    try:
        raw = json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except ManifestError as exc:
        raise ManifestError(exc.problems, source) from None
    except json.JSONDecodeError as exc:
        raise ManifestError([f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"], source) from None
    try:
        return Manifest.model_validate(raw)
    except ValidationError as exc:
        raise ManifestError(format_validation_error(exc), source) from None


def load_manifest(path: str | Path) -> Manifest:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError([f"cannot read {path}: {exc.strerror or exc}"], str(path)) from None
    return parse_manifest(text, str(path))


def manifest_json_schema() -> dict[str, Any]:
    """The JSON Schema of tools.json, as committed in resources/schema/tools.schema.json."""
    schema = Manifest.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "WeClaw Desktop tools.json"
    return schema


def render_manifest_schema() -> str:
    return json.dumps(manifest_json_schema(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"
