"""Import and export of the ecosystem's ``mcpServers`` JSON (Claude Desktop, Cursor, VS Code, Cline, Zed).

:func:`parse_config` reads a pasted text or a file into an :class:`ImportPlan`: one
:class:`ImportedServer` per entry it can use (stdio ``command``/``args``/``env``/``cwd``, remote
``url``/``headers``, ``type``), one problem per entry it cannot (with the reason), nothing lost silently.
Which values are secrets is a rule declared as data (:data:`SECRET_NAME_PARTS`, :data:`SECRET_VALUE_PREFIXES`,
:data:`SECRET_HEADERS`): a name with a part such as ``token``/``key``/``secret``/``password``/
``authorization``, or a value that looks like a credential. The preview (CLI or the MCP page) shows the
guess and the user can flip any value (:meth:`ImportedServer.set_secret`). :func:`store_secrets` moves the
secret values to the keyring (never into settings.json; without a usable keyring it refuses rather than
keep them for one session) and :func:`apply_plan` adds the servers through the settings store.

:func:`export_config` writes the same format back (``mcpServers``), WeClaw's own fields under a
``weclaw`` key (trust, keywords, approval modes) so an export imports back as it was; secret values are
left out unless asked for.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from anyascii import anyascii
from pydantic import ValidationError

from weclaw_desktop.mcp.config import SecretKind, secret_key
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import McpServerSettings, Settings
from weclaw_desktop.settings.mcp_entries import entry_problem
from weclaw_desktop.toolkit.manifest import format_validation_error

#: A name (env variable, header) is a secret when one of its parts is one of these (case-insensitive;
#: parts are split at ``_``, ``-``, spaces and camelCase): GITHUB_PERSONAL_ACCESS_TOKEN, X-Api-Key,
#: apiKey, DB_PASSWORD. Whole words only, so KEYWORDS or PATH are not secrets.
SECRET_NAME_PARTS: frozenset[str] = frozenset(
    {
        "token",
        "key",
        "apikey",
        "secret",
        "password",
        "passwd",
        "pwd",
        "pass",
        "passphrase",
        "authorization",
        "auth",
        "credential",
        "credentials",
        "cookie",
        "bearer",
        "pat",
        "jwt",
        "session",
        "signature",
        "private",
    }
)
#: Header names that always carry a credential.
SECRET_HEADERS: frozenset[str] = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key"})
#: A value that starts like this is a credential whatever its name (well-known token formats).
SECRET_VALUE_PREFIXES: tuple[str, ...] = (
    "Bearer ",
    "Basic ",
    "sk-",
    "sk_",
    "ghp_",
    "gho_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "AKIA",
    "AIza",
    "ya29.",
    "eyJ",  # a JWT
)
#: Where the servers are in the files people paste: Claude/Cursor/Cline, VS Code, VS Code settings, Zed.
SERVER_KEYS: tuple[tuple[str, ...], ...] = (("mcpServers",), ("servers",), ("mcp", "servers"), ("context_servers",))
#: ``type`` values -> our transport.
TRANSPORTS: Mapping[str, str] = {
    "stdio": "stdio",
    "local": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamablehttp": "http",
    "streamable_http": "http",
    "remote": "http",
    "sse": "sse",
}
#: Keys of an entry this importer reads (others are reported as not imported).
KNOWN_KEYS = frozenset(
    {
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "serverUrl",
        "headers",
        "type",
        "transport",
        "disabled",
        "enabled",
        "timeout",
        "autoApprove",
        "alwaysAllow",
        "weclaw",
        "description",
        "name",
    }
)

_NAME_OK = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


class ConfigImportError(ValueError):
    """The text is not a configuration this importer can read at all (the message says why)."""


def name_parts(name: str) -> list[str]:
    return [p for p in re.split(r"[\s_\-.]+", _CAMEL.sub("_", name).lower()) if p]


def looks_secret(name: str, value: str, *, header: bool = False) -> bool:
    """The declared rule: is this env variable or header value a secret?"""
    if header and name.lower() in SECRET_HEADERS:
        return True
    if any(part in SECRET_NAME_PARTS for part in name_parts(name)):
        return True
    return value.startswith(SECRET_VALUE_PREFIXES) and len(value) >= 12


@dataclass
class ImportedValue:
    kind: SecretKind  # env | header
    name: str
    value: str
    secret: bool


@dataclass
class ImportedServer:
    settings: McpServerSettings  # without the values of secrets (env/headers hold only the plain ones)
    values: list[ImportedValue] = field(default_factory=list)
    source_name: str = ""  # the name in the file, when it had to be changed
    notes: list[str] = field(default_factory=list)
    replaces: bool = False  # a server of this name exists and is replaced

    @property
    def name(self) -> str:
        return self.settings.name

    def set_secret(self, name: str, secret: bool) -> bool:
        """Mark the env variable or header ``name`` as a secret (keyring) or a plain value; False if unknown."""
        found = False
        for v in self.values:
            if v.name == name:
                v.secret, found = secret, True
        self._sync()
        return found

    def _sync(self) -> None:
        kind: SecretKind = "env" if self.settings.transport == "stdio" else "header"
        plain = {v.name: v.value for v in self.values if v.kind == kind and not v.secret}
        secret = [v.name for v in self.values if v.kind == kind and v.secret]
        if kind == "env":
            self.settings = self.settings.model_copy(update={"env": plain, "secret_env": secret})
        else:
            self.settings = self.settings.model_copy(update={"headers": plain, "secret_headers": secret})

    def secrets(self) -> dict[str, str]:
        """Keyring entry -> value, for the values marked secret."""
        return {secret_key(self.name, v.kind, v.name): v.value for v in self.values if v.secret and v.value}


@dataclass
class ImportPlan:
    servers: list[ImportedServer] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # entries that cannot be imported, and why
    source: str = ""

    def server(self, name: str) -> ImportedServer | None:
        return next((s for s in self.servers if s.name == name), None)


def _servers_of(doc: Any) -> Mapping[str, Any]:
    if not isinstance(doc, dict):
        raise ConfigImportError('the configuration must be a JSON object with an "mcpServers" object in it')
    for path in SERVER_KEYS:
        node: Any = doc
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict):
            return node
        if node is not None:
            raise ConfigImportError(f'"{".".join(path)}" must be an object of servers (name -> settings)')
    if doc and all(isinstance(v, dict) and ("command" in v or "url" in v or "serverUrl" in v) for v in doc.values()):
        return doc  # a bare name -> server object
    if "command" in doc or "url" in doc:
        raise ConfigImportError('this is one server without a name: put it in {"mcpServers": {"NAME": ...}}')
    raise ConfigImportError('no "mcpServers" (or "servers") object was found in it')


def parse_text(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigImportError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None


def safe_name(name: str, taken: Iterable[str]) -> str:
    """A server name settings accept (``[A-Za-z0-9_-]{1,32}``), unique among ``taken``."""
    base = re.sub(r"[^A-Za-z0-9_-]+", "-", anyascii(name)).strip("-_") or "server"
    base = base[:32]
    used = set(taken)
    candidate, n = base, 1
    while candidate in used:
        n += 1
        tail = f"-{n}"
        candidate = base[: 32 - len(tail)] + tail
    return candidate


def parse_config(text: str, *, existing: Iterable[str] = (), replace: bool = False, source: str = "") -> ImportPlan:
    """An :class:`ImportPlan` for ``text``. ``existing`` are the names already configured: an entry with
    such a name is renamed (``name-2``) unless ``replace``. Raises :class:`ConfigImportError` when the text is
    not a configuration at all."""
    servers = _servers_of(parse_text(text))
    plan = ImportPlan(source=source)
    existing = list(existing)
    taken: set[str] = set() if replace else set(existing)
    for raw_name, entry in servers.items():
        label = str(raw_name)
        if not isinstance(entry, dict):
            plan.problems.append(f"'{label}': not imported: its settings must be an object")
            continue
        try:
            server = _one(label, entry, taken)
        except ValueError as exc:
            plan.problems.append(f"'{label}': not imported: {exc}")
            continue
        server.replaces = replace and server.name in existing
        taken.add(server.name)
        plan.servers.append(server)
    return plan


def _strings(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be an object of names and values")
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def _one(label: str, entry: dict[str, Any], taken: set[str]) -> ImportedServer:
    notes: list[str] = []
    url = entry.get("url") or entry.get("serverUrl") or ""
    kind = str(entry.get("type") or entry.get("transport") or "").strip().lower()
    if kind and kind not in TRANSPORTS:
        raise ValueError(f"its type '{kind}' is not one WeClaw can connect with (stdio, http, sse)")
    transport = TRANSPORTS.get(kind) or ("stdio" if entry.get("command") else "")
    if not transport and url:
        transport = "sse" if str(url).rstrip("/").endswith("/sse") else "http"
    if not transport:
        raise ValueError("it has neither a command nor a url")
    name = label if _NAME_OK.match(label) and label not in taken else safe_name(label, taken)
    args = entry.get("args", [])
    if not isinstance(args, list):
        raise ValueError("args must be a list")
    env = _strings(entry.get("env"), "env")
    headers = _strings(entry.get("headers"), "headers")
    found = entry.get("weclaw")
    ours: dict[str, Any] = found if isinstance(found, dict) else {}
    approval: dict[str, str] = dict(ours.get("tool_approval") or {})
    for key in ("autoApprove", "alwaysAllow"):  # Cline / Roo: tools that run without asking
        for tool in entry.get(key) or []:
            approval.setdefault(str(tool), "allow")
    values: dict[str, Any] = {
        "name": name,
        "enabled": not bool(entry.get("disabled", False)) and entry.get("enabled", True) is not False,
        "transport": transport,
        "command": str(entry.get("command") or ""),
        "args": [str(a) for a in args],
        "cwd": str(entry.get("cwd") or ""),
        "url": str(url),
        "trusted": bool(ours.get("trusted", False)),
        "keywords": [str(k) for k in ours.get("keywords") or []],
        "tool_approval": approval,
        "auth": ours.get("auth", "none"),
    }
    timeout = entry.get("timeout")
    if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
        values["timeout_s"] = float(timeout) / 1000 if timeout > 3600 else float(timeout)  # ms (Zed) or s (Cline)
    elif isinstance(ours.get("timeout_s"), int | float):
        values["timeout_s"] = float(ours["timeout_s"])
    try:
        settings = McpServerSettings.model_validate(values)
    except ValidationError as exc:
        raise ValueError("; ".join(format_validation_error(exc))) from None
    problem = entry_problem(settings)
    if problem:
        raise ValueError(problem)
    if transport == "stdio" and headers:
        notes.append("its headers are ignored (a local program gets environment variables)")
    if transport != "stdio" and env:
        notes.append("its env is ignored (a remote server gets headers)")
    stray = sorted(k for k in entry if k not in KNOWN_KEYS)
    if stray:
        notes.append(f"not imported: {', '.join(stray)}")
    if name != label:
        notes.append(f"renamed from '{label}'")
    if any("${" in v for v in [*env.values(), *headers.values(), *values["args"]]):
        notes.append("a value uses ${...}: WeClaw passes it as written (no variable expansion)")
    kinds: list[tuple[SecretKind, dict[str, str]]] = [("env", env)] if transport == "stdio" else [("header", headers)]
    imported = [
        ImportedValue(kind, n, v, looks_secret(n, v, header=kind == "header"))
        for kind, pairs in kinds
        for n, v in pairs.items()
    ]
    server = ImportedServer(settings=settings, values=imported, source_name=label, notes=notes)
    server._sync()
    return server


def store_secrets(plan: ImportPlan, secrets: SecretStore, *, only: Iterable[str] | None = None) -> list[str]:
    """Put the plan's secret values in the keyring; returns the entries that could not be kept there
    (no usable keyring: they are removed again, so nothing pretends to be stored)."""
    failed: list[str] = []
    stored: list[str] = []
    for server in plan.servers:
        if only is not None and server.name not in set(only):
            continue
        for key, value in server.secrets().items():
            (stored if secrets.set(key, value) else failed).append(key)
    if failed:
        for key in stored + failed:
            secrets.delete(key)
    return failed


def apply_plan(plan: ImportPlan, settings: Settings, *, only: Iterable[str] | None = None) -> list[str]:
    """Add (or replace) the plan's servers in ``settings`` (call it inside ``store.update``, after
    :func:`store_secrets`). Returns the names added."""
    chosen = [s for s in plan.servers if only is None or s.name in set(only)]
    names = {s.name for s in chosen}
    kept = [s for s in settings.mcp_servers if s.name not in names]
    settings.mcp_servers = kept + [s.settings.model_copy(deep=True) for s in chosen]
    return [s.name for s in chosen]


def export_entry(server: McpServerSettings, secrets: SecretStore | None = None) -> dict[str, Any]:
    """One server in the ``mcpServers`` form; secret values only when ``secrets`` is given."""
    out: dict[str, Any] = {}
    if server.transport == "stdio":
        out["command"] = server.command
        out["args"] = list(server.args)
        env = dict(server.env)
        if secrets is not None:
            for name in server.secret_env:
                env[name] = secrets.get(secret_key(server.name, "env", name)) or ""
        if env:
            out["env"] = env
        if server.cwd:
            out["cwd"] = server.cwd
    else:
        out["type"] = server.transport
        out["url"] = server.url
        headers = dict(server.headers)
        if secrets is not None:
            for name in server.secret_headers:
                headers[name] = secrets.get(secret_key(server.name, "header", name)) or ""
        if headers:
            out["headers"] = headers
    if not server.enabled:
        out["disabled"] = True
    ours: dict[str, Any] = {}
    if server.trusted:
        ours["trusted"] = True
    if server.keywords:
        ours["keywords"] = list(server.keywords)
    if server.tool_approval:
        ours["tool_approval"] = dict(server.tool_approval)
    if server.auth != "none":
        ours["auth"] = server.auth
    if server.timeout_s != McpServerSettings.model_fields["timeout_s"].default:
        ours["timeout_s"] = server.timeout_s
    if ours:
        out["weclaw"] = ours
    return out


def export_config(
    servers: Iterable[McpServerSettings], secrets: SecretStore | None = None
) -> dict[str, dict[str, Any]]:
    """``{"mcpServers": {...}}`` for ``servers``; pass ``secrets`` to include the secret values."""
    return {"mcpServers": {s.name: export_entry(s, secrets) for s in servers}}


def omitted_secrets(servers: Iterable[McpServerSettings]) -> list[str]:
    """``server.NAME`` of every secret an export without values leaves out."""
    out: list[str] = []
    for s in servers:
        names = s.secret_env if s.transport == "stdio" else s.secret_headers
        out += [f"{s.name}.{n}" for n in names]
    return out
