"""Secrets (API keys, SMTP passwords) in the OS keyring, service ``weclaw-desktop``.

With no usable keyring backend (a headless Linux machine without D-Bus raises ``NoKeyringError``), a
secret is kept in memory for this run only, and :attr:`SecretStore.persistent` says so; nothing is ever
written to a plaintext file. Every value read or written is registered with :mod:`toolkit.redact` so it
cannot leak into logs or audit records.
"""

from __future__ import annotations

import logging
import os

import keyring
from keyring.errors import KeyringError, PasswordDeleteError

from weclaw_desktop.toolkit.redact import register_secret

SERVICE = "weclaw-desktop"
log = logging.getLogger("weclaw.secrets")

#: Environment variables honoured for the provider's API key, in order.
API_KEY_ENV = ("WECLAW_API_KEY", "OPENAI_API_KEY")


def backend_name() -> str:
    backend = keyring.get_keyring()
    return f"{type(backend).__module__}.{type(backend).__qualname__}"


class SecretStore:
    def __init__(self, service: str = SERVICE) -> None:
        self.service = service
        self._session: dict[str, str] = {}
        self.persistent = True
        self.last_error = ""

    def _fallback(self, exc: Exception) -> None:
        if self.persistent:
            log.warning("no usable keyring (%s); secrets are kept for this session only", type(exc).__name__)
        self.persistent = False
        self.last_error = f"{type(exc).__name__}: {exc}"

    def get(self, name: str) -> str | None:
        if name in self._session:
            return self._session[name]
        try:
            value = keyring.get_password(self.service, name)
        except KeyringError as exc:
            self._fallback(exc)
            value = None
        register_secret(value)
        return value

    def set(self, name: str, value: str) -> bool:
        """Store ``value``; True when it went to the keyring, False when only for this session."""
        register_secret(value)
        try:
            keyring.set_password(self.service, name, value)
        except KeyringError as exc:
            self._fallback(exc)
            self._session[name] = value
            return False
        self._session.pop(name, None)
        return True

    def delete(self, name: str) -> None:
        self._session.pop(name, None)
        try:
            keyring.delete_password(self.service, name)
        except PasswordDeleteError:
            pass
        except KeyringError as exc:
            self._fallback(exc)

    def has(self, name: str) -> bool:
        return bool(self.get(name))

    def api_key(self, name: str = "api_key", env_names: tuple[str, ...] = API_KEY_ENV) -> str | None:
        """The provider key: keyring first, then the environment variables."""
        value = self.get(name)
        if value:
            return value
        for env in env_names:
            if os.environ.get(env):
                register_secret(os.environ[env])
                return os.environ[env]
        return None


_taken: dict[str, str] = {}  # API-key variables already removed from os.environ by this process


def take_env_secrets(extra_names: tuple[str, ...] = ()) -> dict[str, str]:
    """Read the API-key variables, register them as secrets and remove them from ``os.environ``.

    Called at start-up (CLI and GUI), so no subprocess a tool starts can inherit the key. Returns the
    values found, by variable name, including those taken by an earlier call in this process.
    """
    for env in (*API_KEY_ENV, *extra_names):
        value = os.environ.pop(env, None)
        if value:
            register_secret(value)
            _taken[env] = value
    return {k: v for k, v in _taken.items() if k in (*API_KEY_ENV, *extra_names)}


def forget_env_secrets() -> None:
    """Forget the values taken from the environment (tests isolate themselves with it)."""
    _taken.clear()
