"""The MCP page's bookkeeping of server secrets in the keyring (no Qt): typed values for a Test, and what
happens to stored values when a server is removed, renamed, or a secret is taken off its list."""

from __future__ import annotations

from weclaw_desktop.mcp.config import secret_key
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import McpServerSettings


class TypedSecrets(SecretStore):
    """The keyring, with the values typed in the form (not applied yet) taking precedence (for Test)."""

    def __init__(self, base: SecretStore, typed: dict[str, str]) -> None:
        super().__init__(base.service)
        self._base = base
        self._typed = typed

    def get(self, name: str) -> str | None:
        return self._typed.get(name) or self._base.get(name)


def _lists(settings: McpServerSettings) -> tuple[tuple[str, list[str]], ...]:
    return (("env", settings.secret_env), ("header", settings.secret_headers))


def forget_secrets(store: SecretStore, server: str, settings: McpServerSettings) -> None:
    for kind, names in _lists(settings):
        for name in names:
            store.delete(secret_key(server, kind, name))  # type: ignore[arg-type]


def drop_unlisted_secrets(store: SecretStore, old: McpServerSettings, new: McpServerSettings) -> None:
    """Keyring entries of secrets the user took off the list."""
    for (kind, before), (_, after) in zip(_lists(old), _lists(new), strict=True):
        for name in set(before) - set(after):
            store.delete(secret_key(old.name, kind, name))  # type: ignore[arg-type]


def move_secrets(store: SecretStore, old: str, settings: McpServerSettings) -> None:
    for kind, names in _lists(settings):
        for name in names:
            value = store.get(secret_key(old, kind, name))  # type: ignore[arg-type]
            if value:
                store.set(secret_key(settings.name, kind, name), value)  # type: ignore[arg-type]
                store.delete(secret_key(old, kind, name))  # type: ignore[arg-type]


def pairs(text: str, sep: str) -> dict[str, str]:
    """``NAME=value`` (or ``Name: value``) lines as a dict; lines without ``sep`` are ignored."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if sep in line:
            key, value = line.split(sep, 1)
            if key.strip():
                out[key.strip()] = value.strip()
    return out
