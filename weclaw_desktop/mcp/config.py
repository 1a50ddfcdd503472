"""From a server's settings to what the transport needs, with its secrets read from the keyring.

Secrets of a server live in the keyring under ``mcp.<server>.env.<NAME>`` (environment variables of a
stdio server) and ``mcp.<server>.header.<NAME>`` (HTTP headers). They are read at connect time only,
registered for redaction, handed to the transport and never logged or stored anywhere else.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import McpServerSettings
from weclaw_desktop.settings.mcp_entries import entry_problem

SecretKind = Literal["env", "header"]


def secret_key(server: str, kind: SecretKind, name: str) -> str:
    """The keyring entry that holds one secret of a server."""
    return f"mcp.{server}.{kind}.{name}"


@dataclass
class Resolved:
    env: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)  # keyring entries that are not set


def resolve(settings: McpServerSettings, store: SecretStore) -> Resolved:
    """The server's plain values merged with its secrets; ``missing`` lists secrets not in the keyring."""
    out = Resolved(env=dict(settings.env), headers=dict(settings.headers))
    # Only the secrets of the transport in use: a stdio server never needs its (old) header secrets.
    wanted = (
        [("env", settings.secret_env, out.env)]
        if settings.transport == "stdio"
        else [("header", settings.secret_headers, out.headers)]
    )
    for kind, names, target in wanted:
        for name in names:
            key = secret_key(settings.name, kind, name)  # type: ignore[arg-type]
            value = store.get(key)
            if value:
                target[name] = value
            else:
                out.missing.append(key)
    return out


def settings_problem(settings: McpServerSettings) -> str | None:
    """Why these settings cannot work (said before anything starts), or None."""
    return entry_problem(settings)


def working_dir(settings: McpServerSettings) -> str | None:
    """The folder a stdio server starts in (``~`` expanded), or None for WeClaw's own."""
    return os.path.expanduser(settings.cwd) if settings.cwd else None


def roots_of(allowed: list[str]) -> list[Path]:
    """The folders servers are told they may work in: the file tools' allowed roots ([] = the home folder)."""
    return [Path(r).expanduser() for r in allowed] if allowed else [Path.home()]
