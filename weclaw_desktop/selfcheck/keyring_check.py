"""Is the keyring the same in this build as from source?

The known trap: a bundle that lost a backend's dependency (``secretstorage``, ``jeepney``, or
cryptography's ``_cffi_backend``) makes keyring fall back, silently, to the fail backend. So besides the
active backend this module reports, for every backend class keyring knows, its priority or the reason it
is not usable here (:func:`backend_summary`), imports the platform's native backend with its
dependencies, and on Linux runs Secret Service's transport encryption (DH key exchange + AES) without a
D-Bus session. ``scripts/build_bundle.py`` compares the bundle's summary with the source's.
"""

from __future__ import annotations

import importlib
import os
import sys
from importlib.metadata import entry_points

import keyring
import keyring.backend

#: The native backend of each platform and the modules it needs at run time.
NATIVE_BACKENDS: dict[str, tuple[str, ...]] = {
    "linux": (
        "keyring.backends.SecretService",
        "secretstorage",
        "secretstorage.dhcrypto",
        "jeepney",
        "jeepney.io.blocking",
        "cryptography.hazmat.primitives.ciphers",
        "cryptography.hazmat.bindings._rust",
        "_cffi_backend",
    ),
    "win32": ("keyring.backends.Windows", "win32ctypes.pywin32.win32cred"),
    "darwin": ("keyring.backends.macOS", "keyring.backends.macOS.api"),
}


def platform_key(platform: str = sys.platform) -> str:
    return "linux" if platform.startswith("linux") else platform


def backend_summary() -> str:
    """``module.Class=priority`` (or ``=!reason``) for every backend class keyring loaded, sorted.

    Only keyring's own backends and those registered as ``keyring.backends`` entry points count; a class
    defined elsewhere (a test's in-memory keyring) is left out, so source and bundle compare equal.
    """
    keyring.backend.get_all_keyring()  # loads the backends registered as entry points (as keyring does)
    parts = []
    plugin_modules = {ep.module for ep in entry_points(group="keyring.backends")}
    for cls in keyring.backend.KeyringBackend._classes:
        if not cls.__module__.startswith("keyring.backends.") and cls.__module__ not in plugin_modules:
            continue
        name = f"{cls.__module__}.{cls.__qualname__}"
        try:
            status = f"{float(cls.priority):g}"
        except Exception as exc:  # keyring reports "not usable here" by raising from priority
            status = "!" + " ".join(str(exc).split())
        parts.append(f"{name}={status}")
    return "; ".join(sorted(parts))


def native_modules(platform: str = sys.platform) -> list[str]:
    """Import the platform's native backend and its dependencies; raise ImportError naming the first missing."""
    names = NATIVE_BACKENDS.get(platform_key(platform), ())
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise ImportError(f"{name} cannot be imported ({exc}): the native keyring backend would be lost") from exc
    return list(names)


def secret_service_crypto_roundtrip() -> None:
    """Secret Service's ``dh-ietf1024-sha256-aes128-cbc-pkcs7``: both sides' DH, AES encrypt, decrypt."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from secretstorage.dhcrypto import Session
    from secretstorage.util import format_secret

    ours, theirs = Session(), Session()
    ours.set_server_public_key(theirs.my_public_key)
    theirs.set_server_public_key(ours.my_public_key)
    ours.object_path = "/org/freedesktop/secrets/session/selftest"
    secret = os.urandom(21)
    _path, iv, encrypted, _type = format_secret(ours, secret, "application/octet-stream")
    assert theirs.aes_key is not None
    decryptor = Cipher(algorithms.AES(theirs.aes_key), modes.CBC(iv)).decryptor()
    padded = decryptor.update(encrypted) + decryptor.finalize()
    if padded[: -padded[-1]] != secret:
        raise ValueError("Secret Service encryption round trip returned different bytes")
