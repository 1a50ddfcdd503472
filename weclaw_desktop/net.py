"""TLS for outgoing connections: the operating system's trust store, certifi's only where there is none.

- Windows and macOS: the ``truststore`` package verifies with the system's own verifier (the Windows
  certificate store, the macOS keychain), so CAs an organisation installs are trusted, as in the browser.
- Linux and other Unix systems: the distribution's CA file or folder. OpenSSL's compiled-in default is the
  build machine's (``/usr/lib/ssl`` for a bundle built on Debian), so when it holds nothing the locations
  truststore knows are tried in order (Fedora/RHEL, Arch, Alpine, openSUSE, Debian). They are loaded once
  per context: truststore itself would reload the CA file at every connection (tens of ms each).
- Nowhere (a bare container without ``ca-certificates``): certifi's bundle, shipped inside the app.

:func:`trust` says which, for the self-test and ``weclaw doctor``. :func:`shared_ssl_context` is the one
context the model clients share: loading the CA file takes 50-80 ms, so it is loaded once per process (and
off the UI thread: the provider builds its client in a worker thread).
"""

from __future__ import annotations

import functools
import logging
import os
import re
import ssl
import sys
import threading
from dataclasses import dataclass

log = logging.getLogger("weclaw.net")

#: CA files of the Unix distributions, in truststore's order (its list, else this copy of it).
_FALLBACK_CANDIDATES = (
    "/etc/ssl/cert.pem",  # Alpine, Arch, Fedora 34-43, RHEL 9-10, BSD
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  # Fedora 44+, RHEL 11+
    "/etc/pki/tls/cert.pem",  # older Fedora, RHEL, CentOS
    "/etc/ssl/certs/ca-certificates.crt",  # Debian, Ubuntu
    "/etc/ssl/ca-bundle.pem",  # openSUSE
)
_HASHED = re.compile(r"^[0-9a-fA-F]{8}\.\d+$")
NATIVE_PLATFORMS = ("win32", "darwin")


def _candidates() -> tuple[str, ...]:
    try:
        from truststore import _openssl

        return tuple(getattr(_openssl, "_CA_FILE_CANDIDATES", _FALLBACK_CANDIDATES))
    except ImportError:
        return _FALLBACK_CANDIDATES


#: Where to look on Unix after OpenSSL's default (tests replace it).
CA_FILE_CANDIDATES: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Trust:
    """Where this machine's TLS trust comes from."""

    source: str  # "system" or "certifi"
    how: str  # "truststore" (native verifier), "file", "folder" or "certifi"
    where: str  # a path, or the name of the native store

    @property
    def text(self) -> str:
        if self.how == "truststore":
            return f"the system store ({self.where}, through truststore)"
        if self.how == "certifi":
            return f"certifi's bundle ({self.where}): no system CA store found"
        return f"the system store ({self.where})"


def _capath_has_certs(path: str | None) -> bool:
    if not path or not os.path.isdir(path):
        return False
    try:
        return any(_HASHED.match(name) for name in os.listdir(path))
    except OSError:
        return False


def find_trust(platform: str = sys.platform) -> Trust:
    """Decide where trust comes from on this machine (no caching; see :func:`trust`)."""
    if platform in NATIVE_PLATFORMS:
        try:
            import truststore  # noqa: F401
        except ImportError:
            log.warning("truststore is missing: falling back to OpenSSL's CA locations")
        else:
            store = "Windows certificate store" if platform == "win32" else "macOS keychain"
            return Trust("system", "truststore", store)
    paths = ssl.get_default_verify_paths()
    if paths.cafile:  # exists (SSL_CERT_FILE or OpenSSL's default)
        return Trust("system", "file", paths.cafile)
    if _capath_has_certs(paths.capath):
        return Trust("system", "folder", str(paths.capath))
    for candidate in CA_FILE_CANDIDATES if CA_FILE_CANDIDATES is not None else _candidates():
        if os.path.isfile(candidate):
            return Trust("system", "file", candidate)
    import certifi

    return Trust("certifi", "certifi", certifi.where())


@functools.cache
def trust() -> Trust:
    """Where TLS trust comes from here (decided once per process)."""
    found = find_trust()
    if found.source == "certifi":
        log.info("no system CA certificates found; using certifi's bundle")
    return found


def trust_source() -> str:
    """'system' or 'certifi'."""
    return trust().source


def ssl_context() -> ssl.SSLContext:
    """A new verifying client context (hostname checked, certificate required) from :func:`trust`."""
    found = trust()
    if found.how == "truststore":
        import truststore

        return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if found.how == "folder":
        return ssl.create_default_context(capath=found.where)
    return ssl.create_default_context(cafile=found.where)


_shared: ssl.SSLContext | None = None
_shared_lock = threading.Lock()


def shared_ssl_context() -> ssl.SSLContext:
    """One verifying client context for the whole process, built on first use (thread-safe). A client
    context can serve any number of connections; nobody changes it after it was built."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ssl_context()
        return _shared
