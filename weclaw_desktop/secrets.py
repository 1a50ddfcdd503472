"""Secrets (API keys, SMTP passwords) in the OS keyring, service ``weclaw-desktop``.

With no usable keyring backend (a headless Linux machine without D-Bus raises ``NoKeyringError``), a
secret is kept in memory for this run only, and :attr:`SecretStore.persistent` says so; nothing is ever
written to a plaintext file. Every value read or written is registered with :mod:`toolkit.redact` so it
cannot leak into logs or audit records.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Mapping

import keyring
from keyring.errors import KeyringError, PasswordDeleteError

from weclaw_desktop.toolkit.redact import is_secret_name, register_secret

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
            found = env_secret(env)
            if found:
                register_secret(found)
                return found
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


def env_secret(name: str) -> str | None:
    """The value of a secret variable: taken at start-up (re-exec) or still in the environment."""
    return _taken.get(name) or os.environ.get(name) or None


def forget_env_secrets() -> None:
    """Forget the values taken from the environment (tests isolate themselves with it)."""
    _taken.clear()


# --- the process's own initial environment ---------------------------------------------------------------
#: Set in the re-executed process: the file descriptor the secret variables come through.
SECRET_FD_ENV = "WECLAW_SECRET_FD"


def secret_env_names(environ: Mapping[str, str], extra: tuple[str, ...] = ()) -> list[str]:
    """Variables of ``environ`` that hold secrets: the API-key variables, ``extra`` (``--api-key-env``) and
    every name with KEY, TOKEN, SECRET, PASSWORD, PASSWD or CREDENTIAL in it."""
    wanted = {*API_KEY_ENV, *extra}
    return [n for n, v in environ.items() if v and (n in wanted or is_secret_name(n)) and n != SECRET_FD_ENV]


def reexec_without_secrets(argv: list[str] | None = None) -> None:
    """Start this program again with no secret in its initial environment (POSIX; call first thing).

    On Linux ``/proc/<pid>/environ`` (on macOS ``KERN_PROCARGS2``) shows the environment a process was
    started with, whatever it later removes from ``os.environ``, and any child of the same user can read
    it: a shell command the model runs could read the API key from its parent. So when the environment
    holds secret variables, they are written to a pipe and the process re-executes itself (same pid,
    stdin/stdout and arguments) without them; :func:`receive_env_secrets` in the new image reads the pipe:
    the API-key variables are taken (registered for redaction, never put back), the other secret variables
    are put back into ``os.environ`` only (heap memory, not the initial block), so the app behaves as
    before and child processes still get them removed by ``safe_env``. Windows keeps no copy of the
    initial block (removing a variable changes the one block other processes can read), so it only pops.
    """
    if os.name != "posix" or os.environ.get(SECRET_FD_ENV) or not sys.executable:
        return
    raw = list(sys.argv if argv is None else argv)
    extra = tuple(raw[i + 1] for i, a in enumerate(raw[:-1]) if a == "--api-key-env")
    extra += tuple(a.split("=", 1)[1] for a in raw if a.startswith("--api-key-env="))
    names = secret_env_names(os.environ, extra)
    if not names:
        return
    payload = json.dumps(
        {"take": [n for n in names if n in (*API_KEY_ENV, *extra)], "values": {n: os.environ[n] for n in names}}
    ).encode()
    if len(payload) > 60_000:  # more than a pipe holds without a reader: keep the old behaviour
        return
    read_fd, write_fd = os.pipe()
    os.write(write_fd, payload)
    os.close(write_fd)
    os.set_inheritable(read_fd, True)
    env = {k: v for k, v in os.environ.items() if k not in names}
    env[SECRET_FD_ENV] = str(read_fd)
    args = list(getattr(sys, "orig_argv", None) or [sys.executable, *sys.argv])
    if getattr(sys, "frozen", False):  # the bundle: start its bootloader afresh (frozen.startup already
        env["PYINSTALLER_RESET_ENVIRONMENT"] = "1"  # gave os.environ back the user's values on Linux)
        args = [sys.executable, *sys.argv[1:]]
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, args, env)
    except OSError as exc:  # cannot re-exec (odd interpreter setup): carry on with the key only popped
        os.close(read_fd)
        log.warning("could not restart without secrets in the environment: %s", exc)


def receive_env_secrets() -> None:
    """In the re-executed process: read the secret variables from the pipe (see reexec_without_secrets)."""
    fd_text = os.environ.pop(SECRET_FD_ENV, None)
    if not fd_text:
        return
    try:
        fd = int(fd_text)
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        os.close(fd)
        data = json.loads(b"".join(chunks) or b"{}")
    except (OSError, ValueError) as exc:
        log.warning("could not read the secret variables passed on restart: %s", exc)
        return
    take = set(data.get("take", []))
    for name, value in data.get("values", {}).items():
        register_secret(value)
        if name in take:
            _taken[name] = value
        else:
            os.environ[name] = value  # heap memory: not in /proc/<pid>/environ


# --- a password in the provider's base URL ---------------------------------------------------------------
def url_password_name(api_key_name: str) -> str:
    """The keyring entry that holds the password of the provider's base URL (``https://user:pass@host``)."""
    return f"{api_key_name}.base_url_password"


def split_url_password(url: str) -> tuple[str, str | None]:
    """``https://me:pw@host/v1`` -> (``https://me@host/v1``, ``pw``); a URL without a password is unchanged."""
    from urllib.parse import unquote, urlsplit, urlunsplit

    try:
        parts = urlsplit(url.strip())
        password = unquote(parts.password) if parts.password else None
    except ValueError:
        return url, None
    if not password:
        return url, None
    netloc = parts.netloc.rsplit("@", 1)
    user = netloc[0].split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}@{netloc[1]}")), password


def join_url_password(url: str, password: str | None) -> str:
    """Put the stored password back into ``https://me@host/v1`` for the request (never for display)."""
    from urllib.parse import quote, urlsplit, urlunsplit

    if not password:
        return url
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    user, host = parts.netloc.rsplit("@", 1)
    register_secret(password)
    return urlunsplit(parts._replace(netloc=f"{user.split(':', 1)[0]}:{quote(password, safe='')}@{host}"))
