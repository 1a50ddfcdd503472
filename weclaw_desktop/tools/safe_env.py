"""The environment for child processes the agent starts (shell, python_runner), with secrets removed.

It starts from the user's own environment: in the PyInstaller bundle that is the environment the user
started the app with (:func:`weclaw_desktop.frozen.child_environ`: ``LD_LIBRARY_PATH`` and the other
variables PyInstaller pointed into the bundle put back, ``_PYI_*`` dropped), so ``bash``, ``git`` or ``ssh``
load the system's libraries, not the bundle's.

Removed: ``WECLAW_API_KEY``, ``OPENAI_API_KEY``, any variable whose name contains KEY, TOKEN, SECRET,
PASSWORD, PASSWD or CREDENTIAL (case-insensitive), and any variable whose value equals or contains a secret
registered with :func:`weclaw_desktop.toolkit.redact.register_secret` (API keys and passwords loaded from the
keyring). Everything else (PATH, HOME, LANG, proxies without credentials...) is kept so commands behave as
in the user's own terminal.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from weclaw_desktop.frozen import child_environ
from weclaw_desktop.toolkit.redact import ALWAYS_SECRET_NAMES, SECRET_NAME_PARTS, is_secret_name, known_secrets

ALWAYS_REMOVED = ALWAYS_SECRET_NAMES  # the names are declared once, in toolkit.redact (secrets.py uses them too)
__all__ = ["ALWAYS_REMOVED", "SECRET_NAME_PARTS", "is_secret_name", "removed_names", "safe_env"]


def safe_env(base: Mapping[str, str] | None = None, *, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of ``base`` (default: ``os.environ``; when frozen, the user's original of it) without secrets,
    then ``extra`` added.

    ``extra`` is trusted (set by the tool itself, e.g. ``PYTHONIOENCODING``) but still may not carry a
    registered secret value.
    """
    source = child_environ(os.environ if base is None else base)
    secrets = [s for s in known_secrets() if s]
    env: dict[str, str] = {}
    for name, value in source.items():
        if is_secret_name(name) or any(secret in value for secret in secrets):
            continue
        env[name] = value
    for name, value in (extra or {}).items():
        if any(secret in value for secret in secrets):
            raise ValueError(f"refusing to pass a registered secret to a child process in {name}")
        env[name] = value
    return env


def removed_names(base: Mapping[str, str] | None = None) -> list[str]:
    """Names :func:`safe_env` would remove from ``base`` (for diagnostics; never the values)."""
    source = os.environ if base is None else base
    kept = safe_env(source)
    return sorted(name for name in source if name not in kept)
