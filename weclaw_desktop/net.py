"""TLS for outgoing connections: the system trust store, or certifi's where the system has none.

A PyInstaller bundle on Linux trusts the system CA store, and a machine without ``ca-certificates``
would fail every HTTPS call. :func:`ssl_context` checks whether the default context has any CA loaded
and falls back to certifi's bundle (which PyInstaller ships) when it has none.
"""

from __future__ import annotations

import functools
import logging
import ssl

log = logging.getLogger("weclaw.net")


def _has_cas(ctx: ssl.SSLContext) -> bool:
    stats = ctx.cert_store_stats()
    if stats.get("x509_ca", 0) > 0:
        return True
    # OpenSSL loads a hashed CA directory lazily, so count what it would find there too.
    paths = ssl.get_default_verify_paths()
    import os

    return bool(paths.capath and os.path.isdir(paths.capath) and os.listdir(paths.capath))


@functools.cache
def trust_source() -> str:
    """'system' or 'certifi': where TLS trust comes from on this machine."""
    return "system" if _has_cas(ssl.create_default_context()) else "certifi"


def ssl_context() -> ssl.SSLContext:
    """A verifying client context; certifi's CAs when the system has none."""
    if trust_source() == "system":
        return ssl.create_default_context()
    import certifi

    log.info("no system CA certificates found; using certifi's bundle")
    return ssl.create_default_context(cafile=certifi.where())
