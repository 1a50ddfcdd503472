"""Safe HTTP(S) retrieval for the web tool: scheme and address checks, manual redirects, size and time caps.

Redirects are followed by hand so every hop is checked again (a redirect to ``file:`` or to a private
address is refused, and loops end after ``max_redirects``). The body is read in chunks and reading stops
at ``max_bytes``; a binary body is not read at all.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit
from urllib.request import getproxies

import aiohttp
from multidict import CIMultiDictProxy

ALLOWED_SCHEMES = ("http", "https")
CHUNK = 64 * 1024

#: Content types whose body is worth reading as text.
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml", "application/rss+xml")
TEXT_SUFFIXES = ("+json", "+xml")


class FetchError(Exception):
    """A fetch that cannot go on; the message tells the model what happened and what to do."""


@dataclass
class FetchLimits:
    max_bytes: int
    timeout_s: float
    max_redirects: int
    user_agent: str
    allow_private: bool = False


@dataclass
class Fetched:
    url: str
    final_url: str
    status: int
    reason: str
    content_type: str
    charset: str | None
    headers: CIMultiDictProxy[str] | dict[str, str]
    body: bytes = b""
    body_read: bool = False
    truncated: bool = False
    declared_length: int | None = None
    redirects: list[str] = field(default_factory=list)

    @property
    def is_text(self) -> bool:
        return is_text_type(self.content_type)


def is_text_type(content_type: str) -> bool:
    ct = content_type.lower()
    return ct == "" or ct.startswith(TEXT_TYPES) or ct.endswith(TEXT_SUFFIXES)


def check_url(url: str) -> str:
    """The URL, normalised, or :class:`FetchError` when it is not an http(s) address with a host."""
    text = url.strip()
    if "://" not in text and not text.lower().startswith(("mailto:", "file:", "data:", "javascript:")):
        text = "https://" + text  # "example.com/page" is what users type
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise FetchError(
            f"Only http:// and https:// addresses can be fetched, not '{scheme}:'. "
            "To read a local file use the file tool instead."
        )
    if not parts.hostname:
        raise FetchError(f"'{url}' has no host name. Give a full address such as https://example.com/page.")
    return text


async def check_host(host: str, port: int, *, allow_private: bool) -> None:
    """Refuse loopback, private, link-local and other non-public addresses unless allowed."""
    if allow_private:
        return
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        if _is_ip(host):
            raise FetchError(f"'{host}' is not a usable address ({exc.strerror or exc}).") from None
        if await asyncio.to_thread(getproxies):
            return  # behind a proxy the name may resolve only there; the proxy then connects, not this machine
        raise FetchError(f"The host '{host}' could not be found ({exc.strerror or exc}). Check the address.") from None
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if not address.is_global:
            raise FetchError(
                f"'{host}' points to a local or private network address ({address}); the web tool only fetches "
                "public internet addresses. Allow local addresses in Settings > Tools > web if this is intended."
            )


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


async def fetch(session: aiohttp.ClientSession, url: str, limits: FetchLimits) -> Fetched:
    """GET ``url`` within ``limits``. Raises :class:`FetchError`; the whole fetch obeys ``limits.timeout_s``."""
    try:
        async with asyncio.timeout(limits.timeout_s):
            return await _fetch(session, url, limits)
    except TimeoutError:
        raise FetchError(
            f"The page did not finish loading within {limits.timeout_s:g} s. The site may be slow or down; "
            "try again later or another source."
        ) from None


async def _fetch(session: aiohttp.ClientSession, url: str, limits: FetchLimits) -> Fetched:
    current = check_url(url)
    redirects: list[str] = []
    headers = {"User-Agent": limits.user_agent, "Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
    while True:
        parts = urlsplit(current)
        await check_host(
            parts.hostname or "",
            parts.port or (443 if parts.scheme == "https" else 80),
            allow_private=limits.allow_private,
        )
        try:
            async with session.get(current, headers=headers, allow_redirects=False) as resp:
                if resp.status in (301, 302, 303, 307, 308) and "Location" in resp.headers:
                    target = urljoin(current, resp.headers["Location"])
                    redirects.append(target)
                    if len(redirects) > limits.max_redirects:
                        raise FetchError(
                            f"Too many redirects (more than {limits.max_redirects}) starting at {url}; "
                            "the site redirects in a loop. Try another address."
                        )
                    try:
                        current = check_url(target)
                    except FetchError as exc:
                        raise FetchError(f"The page redirected to {target}, which is refused: {exc}") from None
                    continue
                return await _read(resp, url, current, limits, redirects)
        except aiohttp.ClientError as exc:
            raise FetchError(f"Could not load {current}: {type(exc).__name__}: {exc}. Check the address.") from None


async def _read(
    resp: aiohttp.ClientResponse, url: str, final_url: str, limits: FetchLimits, redirects: list[str]
) -> Fetched:
    content_type = resp.content_type if resp.headers.get("Content-Type") else ""
    out = Fetched(
        url=url,
        final_url=final_url,
        status=resp.status,
        reason=resp.reason or "",
        content_type=content_type,
        charset=resp.charset,
        headers=resp.headers,
        declared_length=resp.content_length,
        redirects=redirects,
    )
    if not is_text_type(content_type):
        return out  # binary: described from the headers, never downloaded
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.content.iter_chunked(CHUNK):
        room = limits.max_bytes - size
        if len(chunk) >= room:
            chunks.append(chunk[:room])
            size += room
            # Anything past the cap is left unread; closing the response drops the connection.
            out.truncated = len(chunk) > room or not resp.content.at_eof()
            break
        chunks.append(chunk)
        size += len(chunk)
    out.body = b"".join(chunks)
    out.body_read = True
    return out
