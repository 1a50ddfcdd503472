"""The web tool: fetch a page as readable text, or search the web through a pluggable backend."""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

import aiohttp
from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.net import ssl_context
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.toolkit import BaseTool, ToolContext, ToolError, ToolResult, action
from weclaw_desktop.tools.web.extract import decode, describe_binary, html_to_text, pretty_json
from weclaw_desktop.tools.web.fetching import FetchError, FetchLimits, fetch
from weclaw_desktop.tools.web.search import BACKENDS, SearchBackend, SearchError, SearchHit

DEFAULT_UA = "Mozilla/5.0 (compatible; WeClawDesktop/1.0; +https://github.com/weclaw)"


class WebConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_bytes: int = Field(default=3_000_000, ge=1_000, le=50_000_000, description="Stop reading a page past this size")
    timeout_s: float = Field(default=20.0, gt=0, le=120, description="Time limit for one fetch, redirects included")
    max_redirects: int = Field(default=5, ge=0, le=20)
    max_chars: int = Field(default=20_000, ge=500, le=200_000, description="Longest text given to the model")
    user_agent: str = DEFAULT_UA
    allow_private: bool = Field(default=False, description="Also fetch localhost and private network addresses")
    use_system_proxy: bool = Field(default=True, description="Use the proxy from the environment or OS settings")
    search_timeout_s: float = Field(default=15.0, gt=0, le=60)
    duckduckgo_url: str = "https://html.duckduckgo.com/html/"
    brave_url: str = "https://api.search.brave.com/res/v1/web/search"
    tavily_url: str = "https://api.tavily.com/search"

    def base_url(self, backend: str) -> str:
        return str(getattr(self, f"{backend}_url"))


class FetchParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="The http:// or https:// address of the page", min_length=1, max_length=4000)
    max_chars: int | None = Field(
        default=None, ge=200, le=200_000, description="Return at most this many characters of text (default 20000)"
    )


class SearchParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(description="What to search for, in the user's language", min_length=1, max_length=400)
    count: int = Field(default=5, ge=1, le=20, description="How many results to return")
    backend: str | None = Field(
        default=None,
        description="Leave empty to use the best enabled backend. One of: duckduckgo (no key), "
        "brave (needs an API key), tavily (needs an API key).",
    )


def backend_status(secrets: SecretStore | None = None) -> list[dict[str, Any]]:
    """Every search backend, whether it is enabled, and how to enable it (for the settings page too)."""
    store = secrets or SecretStore()
    out = []
    for name, backend in BACKENDS.items():
        enabled = backend.secret_name is None or store.has(backend.secret_name)
        out.append(
            {
                "name": name,
                "enabled": enabled,
                "needs_key": backend.secret_name,
                "how_to_enable": "" if enabled else _how_to_enable(backend),
            }
        )
    return out


def _how_to_enable(backend: SearchBackend) -> str:
    return (
        f"get an API key at {backend.signup} and save it in Settings > Tools > web "
        f"(keyring entry '{backend.secret_name}')"
    )


class WebTool(BaseTool):
    Config = WebConfig

    def __init__(self, config: BaseModel | None = None, *, name: str | None = None) -> None:
        super().__init__(config, name=name)
        self.secrets = SecretStore()
        self._ssl: ssl.SSLContext | None = None

    async def _session(self, timeout_s: float) -> aiohttp.ClientSession:
        if self._ssl is None:  # loading the CA store reads files: once, off the loop
            self._ssl = await asyncio.to_thread(ssl_context)
        return aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=self._ssl),
            timeout=aiohttp.ClientTimeout(total=timeout_s, sock_connect=min(timeout_s, 10.0)),
            headers={"User-Agent": self.config.user_agent},
            trust_env=self.config.use_system_proxy,  # HTTP(S)_PROXY / the OS proxy settings, common in China
        )

    @action(
        "Download one web page (http or https) and return its title and readable text without menus or ads. "
        "Use it to read an article, documentation or a link the user gives, or to open a search result. "
        "JSON is returned pretty-printed; PDFs, images and other binary files are only described."
    )
    async def fetch(self, params: FetchParams, ctx: ToolContext) -> ToolResult:
        cfg: WebConfig = self.config
        limits = FetchLimits(
            max_bytes=cfg.max_bytes,
            timeout_s=cfg.timeout_s,
            max_redirects=cfg.max_redirects,
            user_agent=cfg.user_agent,
            allow_private=cfg.allow_private,
        )
        ctx.progress(None, f"fetching {params.url}")
        try:
            async with await self._session(cfg.timeout_s) as session:
                page = await fetch(session, params.url, limits)
        except FetchError as exc:
            raise ToolError(str(exc)) from None
        data: dict[str, Any] = {
            "url": page.final_url,
            "status": page.status,
            "content_type": page.content_type or "unknown",
        }
        if page.redirects:
            data["redirected_from"] = page.url
        if page.status >= 400:
            return ToolResult.fail(
                f"{page.final_url} answered HTTP {page.status} {page.reason}".rstrip()
                + (". The page does not exist; check the address." if page.status in (404, 410) else "."),
                data=data,
            )
        if not page.body_read:
            data["bytes"] = page.declared_length
            return ToolResult.ok(describe_binary(page.content_type, page.declared_length), data=data)

        limit = params.max_chars or cfg.max_chars
        data["bytes"] = len(page.body)
        data["truncated_download"] = page.truncated
        is_html = page.content_type in ("text/html", "application/xhtml+xml") or (
            page.content_type == "" and page.body[:1024].lstrip().lower().startswith((b"<!doctype html", b"<html"))
        )
        text = await asyncio.to_thread(decode, page.body, page.charset, html=is_html)
        header = f"URL: {page.final_url}\n"
        if is_html:
            extracted = await asyncio.to_thread(html_to_text, text, page.final_url)
            data.update(title=extracted.title, links=extracted.links, extraction=extracted.method)
            header += f"Title: {extracted.title or '(none)'}\n"
            body = extracted.text or "(the page has no readable text; it may need JavaScript)"
        elif page.content_type.endswith("json"):
            pretty = pretty_json(text) if not page.truncated else None
            body = pretty if pretty is not None else text
            data["json"] = pretty is not None
        else:
            body = text
        data["chars"] = len(body)
        notes = []
        if page.truncated:
            notes.append(f"only the first {cfg.max_bytes:,} bytes of the page were read")
        if len(body) > limit:
            body = body[:limit]
            notes.append(f"text cut at {limit:,} of {data['chars']:,} characters")
        data["truncated"] = bool(notes)
        footer = f"\n\n[{'; '.join(notes)}]" if notes else ""
        result = ToolResult.ok(header + "\n" + body + footer, data=data)
        result.truncated = bool(notes)
        return result

    @action(
        "Search the web and return titles, links and snippets of the top results. Use it for current events, "
        "facts you are unsure of, or to find pages to read with web_fetch."
    )
    async def search(self, params: SearchParams, ctx: ToolContext) -> ToolResult:
        cfg: WebConfig = self.config
        status = await asyncio.to_thread(backend_status, self.secrets)  # keyring reads can block
        enabled = [s["name"] for s in status if s["enabled"]]
        disabled = {s["name"]: s["how_to_enable"] for s in status if not s["enabled"]}
        if params.backend:
            wanted = params.backend.strip().lower()
            if wanted not in BACKENDS:
                raise ToolError(
                    f"There is no search backend '{params.backend}'. Backends: {', '.join(BACKENDS)}; "
                    f"enabled now: {', '.join(enabled)}. Leave backend empty to use the default."
                )
            if wanted in disabled:
                raise ToolError(
                    f"The {wanted} search backend is not enabled: {disabled[wanted]}. "
                    f"Enabled now: {', '.join(enabled)}; call again without backend to use one of them."
                )
            order = [wanted]
        else:
            order = enabled
        ctx.progress(None, f"searching: {params.query}")
        errors: list[str] = []
        async with await self._session(cfg.search_timeout_s) as session:
            for name in order:
                backend = BACKENDS[name]
                key = await asyncio.to_thread(self.secrets.get, backend.secret_name) if backend.secret_name else None
                try:
                    async with asyncio.timeout(cfg.search_timeout_s):
                        hits = await backend.search(session, cfg.base_url(name), params.query, params.count, key)
                except TimeoutError:
                    errors.append(f"{name}: no answer within {cfg.search_timeout_s:g} s")
                    continue
                except (SearchError, aiohttp.ClientError) as exc:
                    errors.append(f"{name}: {exc}")
                    continue
                return self._results(params.query, name, hits, errors, disabled)
        raise ToolError("Web search failed. " + " ".join(errors) + " Try again later or rephrase the query.")

    @staticmethod
    def _results(
        query: str, backend: str, hits: list[SearchHit], errors: list[str], disabled: dict[str, str]
    ) -> ToolResult:
        data: dict[str, Any] = {
            "query": query,
            "backend": backend,
            "results": [{"title": h.title, "url": h.url} for h in hits],  # snippets are in the output text
        }
        if errors:
            data["failed_backends"] = errors
        if disabled:
            data["not_enabled"] = sorted(disabled)
        if not hits:
            return ToolResult.ok(f"No results for '{query}' ({backend}). Try other words.", data=data)
        lines = [f"Search results for '{query}' ({backend}):"]
        for i, hit in enumerate(hits, 1):
            lines.append(f"{i}. {hit.title}\n   {hit.url}" + (f"\n   {hit.snippet}" if hit.snippet else ""))
        return ToolResult.ok("\n".join(lines), data=data)
