"""Pluggable web search backends.

``duckduckgo`` needs no key (its HTML endpoint, parsed with lxml). ``brave`` and ``tavily`` need an API
key in the keyring under ``web.<backend>_api_key``; a backend without its key is not offered. Base URLs
come from the tool's config so tests point them at a local server.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol
from urllib.parse import parse_qs, urlsplit

import aiohttp
import lxml.html

from weclaw_desktop.tools.web.extract import decode


class SearchError(Exception):
    """A backend failed; the message says how (bad key, rate limit, unexpected page)."""


@dataclass(frozen=True)
class SearchHit:
    title: str
    url: str
    snippet: str

    def as_dict(self) -> dict[str, str]:
        return {"title": self.title, "url": self.url, "snippet": self.snippet}


class SearchBackend(Protocol):
    name: ClassVar[str]
    #: Keyring entry holding the API key, or None for a key-free backend.
    secret_name: ClassVar[str | None]
    #: Where to get a key (shown to the user when the backend is not enabled).
    signup: ClassVar[str]

    async def search(
        self, session: aiohttp.ClientSession, base_url: str, query: str, count: int, api_key: str | None
    ) -> list[SearchHit]: ...


async def _json(resp: aiohttp.ClientResponse, backend: str) -> Any:
    if resp.status in (401, 403):
        raise SearchError(
            f"{backend} refused the API key (HTTP {resp.status}). Check the key in Settings > Tools > web."
        )
    if resp.status == 429:
        raise SearchError(f"{backend} says too many requests (HTTP 429): the quota is used up; try again later.")
    if resp.status >= 400:
        raise SearchError(f"{backend} answered HTTP {resp.status} {resp.reason or ''}".rstrip() + ".")
    try:
        return await resp.json(content_type=None)
    except ValueError as exc:
        raise SearchError(f"{backend} sent a reply that is not JSON ({exc}).") from None


class DuckDuckGo:
    name: ClassVar[str] = "duckduckgo"
    secret_name: ClassVar[str | None] = None
    signup: ClassVar[str] = ""

    async def search(
        self, session: aiohttp.ClientSession, base_url: str, query: str, count: int, api_key: str | None
    ) -> list[SearchHit]:
        async with session.post(base_url, data={"q": query, "kl": "wt-wt"}) as resp:
            if resp.status == 202 or resp.status >= 400:
                raise SearchError(
                    f"DuckDuckGo answered HTTP {resp.status} (it limits automated searches). Try again in a "
                    "minute, or add a Brave or Tavily API key for reliable search."
                )
            body = await resp.read()
        return parse_duckduckgo(decode(body, resp.charset, html=True), count)


def parse_duckduckgo(html: str, count: int) -> list[SearchHit]:
    if not html.strip():
        return []
    root = lxml.html.document_fromstring(html)
    hits: list[SearchHit] = []
    for result in root.cssselect(".result"):
        if "result--ad" in (result.get("class") or ""):
            continue
        anchors = result.cssselect("a.result__a")
        if not anchors:
            continue
        anchor = anchors[0]
        url = _unwrap_duckduckgo(anchor.get("href") or "")
        if not url:
            continue
        snippets = result.cssselect(".result__snippet")
        snippet = " ".join(snippets[0].text_content().split()) if snippets else ""
        hits.append(SearchHit(" ".join(anchor.text_content().split()), url, snippet))
        if len(hits) >= count:
            break
    return hits


def _unwrap_duckduckgo(href: str) -> str:
    """DuckDuckGo links go through ``/l/?uddg=<target>``; return the target."""
    if href.startswith("//"):
        href = "https:" + href
    parts = urlsplit(href)
    if parts.path.startswith("/l/"):
        target = parse_qs(parts.query).get("uddg", [""])[0]
        return target
    return href if parts.scheme in ("http", "https") else ""


class Brave:
    name: ClassVar[str] = "brave"
    secret_name: ClassVar[str | None] = "web.brave_api_key"
    signup: ClassVar[str] = "https://brave.com/search/api/"

    async def search(
        self, session: aiohttp.ClientSession, base_url: str, query: str, count: int, api_key: str | None
    ) -> list[SearchHit]:
        headers = {"Accept": "application/json", "X-Subscription-Token": api_key or ""}
        async with session.get(base_url, params={"q": query, "count": str(count)}, headers=headers) as resp:
            data = await _json(resp, "Brave Search")
        results = (data.get("web") or {}).get("results") or [] if isinstance(data, dict) else []
        return [
            SearchHit(_plain(r.get("title", "")), str(r.get("url", "")), _plain(r.get("description", "")))
            for r in results[:count]
            if isinstance(r, Mapping) and r.get("url")
        ]


class Tavily:
    name: ClassVar[str] = "tavily"
    secret_name: ClassVar[str | None] = "web.tavily_api_key"
    signup: ClassVar[str] = "https://tavily.com/"

    async def search(
        self, session: aiohttp.ClientSession, base_url: str, query: str, count: int, api_key: str | None
    ) -> list[SearchHit]:
        headers = {"Authorization": f"Bearer {api_key or ''}"}
        payload = {"query": query, "max_results": count, "search_depth": "basic"}
        async with session.post(base_url, json=payload, headers=headers) as resp:
            data = await _json(resp, "Tavily")
        results = data.get("results") or [] if isinstance(data, dict) else []
        return [
            SearchHit(
                str(r.get("title", "")).strip(), str(r.get("url", "")), " ".join(str(r.get("content", "")).split())
            )
            for r in results[:count]
            if isinstance(r, Mapping) and r.get("url")
        ]


def _plain(text: Any) -> str:
    """Brave marks matches with <strong>; keep the words only."""
    raw = str(text or "")
    if "<" not in raw:
        return " ".join(raw.split())
    return " ".join(lxml.html.fragment_fromstring(raw, create_parent="span").text_content().split())


#: Every backend, in the order "auto" tries them: keyed backends first (the user set them up on purpose).
BACKENDS: dict[str, SearchBackend] = {b.name: b for b in (Brave(), Tavily(), DuckDuckGo())}
