"""The web tool against a local aiohttp site: extraction, caps, timeouts, redirects, types, search backends."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from toolrun import Run
from tools.web_site import BRAVE_KEY, TAVILY_KEY, Site, build_app, web_config

from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.toolkit import ToolContext, ToolStatus
from weclaw_desktop.tools.web import backend_status
from weclaw_desktop.tools.web.search import parse_duckduckgo


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    state = Site()
    runner = web.AppRunner(build_app(state), shutdown_timeout=0.5)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0)
    await tcp.start()
    port = runner.addresses[0][1]
    state.base = f"http://127.0.0.1:{port}"
    yield state
    await runner.cleanup()


@pytest.fixture
def wrun(ctx: ToolContext, site: Site, memory_keyring: Any) -> Run:
    return Run(ctx, config={"web": web_config(site)})


# --- fetch: HTML --------------------------------------------------------------------------------------
async def test_fetch_article_gives_title_text_and_links(wrun: Run, site: Site) -> None:
    res = await wrun("web_fetch", url=f"{site.base}/article")
    assert res.succeeded, res.output
    assert res.data["title"] == "Rust 1.80 released"
    assert res.data["status"] == 200
    assert res.data["links"] == 5  # /, /news, /about, /notes, /legal; "#top" is not a link
    assert "Title: Rust 1.80 released" in res.output
    assert "This release stabilises LazyCell and LazyLock" in res.output
    assert "- LazyCell and LazyLock" in res.output  # list items keep their bullets
    assert "SECRET_SCRIPT_TEXT" not in res.output and "color: red" not in res.output
    assert "About us" not in res.output and "Copyright footer" not in res.output
    assert res.data["truncated"] is False


async def test_fetch_decodes_gbk_page_declared_in_meta(wrun: Run, site: Site) -> None:
    res = await wrun("web_fetch", url=f"{site.base}/gbk")
    assert res.succeeded, res.output
    assert res.data["title"] == "天气预报"
    assert "北京今天晴，最高气温二十五度" in res.output
    assert "广州今天雷阵雨" in res.output


async def test_fetch_caps_output_chars(wrun: Run, site: Site) -> None:
    res = await wrun("web_fetch", url=f"{site.base}/article", max_chars=200)
    assert res.succeeded
    assert res.truncated and res.data["truncated"] is True
    assert "text cut at 200 of" in res.output
    body = res.output.split("\n\n", 1)[1].rsplit("\n\n[", 1)[0]
    assert len(body) == 200


async def test_huge_page_stops_reading_at_the_cap(ctx: ToolContext, site: Site, memory_keyring: Any) -> None:
    run = Run(ctx, config={"web": web_config(site, max_bytes=200_000)})
    res = await run("web_fetch", url=f"{site.base}/huge")
    assert res.succeeded, res.output
    assert res.data["bytes"] == 200_000
    assert res.data["truncated_download"] is True
    assert "only the first 200,000 bytes of the page were read" in res.output
    assert res.data["title"] == "Huge"
    await asyncio.wait_for(site.huge_done.wait(), 5)
    # The server stopped once the client hung up: far less than the ~110 MB it would have sent.
    assert site.huge_sent < 20_000_000


async def test_slow_page_hits_the_time_limit(ctx: ToolContext, site: Site, memory_keyring: Any) -> None:
    run = Run(ctx, config={"web": web_config(site, timeout_s=0.5)})
    res = await run("web_fetch", url=f"{site.base}/slow")
    assert res.status is ToolStatus.ERROR
    assert "did not finish loading within 0.5 s" in res.output


# --- fetch: redirects and refused addresses -------------------------------------------------------------
async def test_redirect_is_followed_and_reported(wrun: Run, site: Site) -> None:
    res = await wrun("web_fetch", url=f"{site.base}/moved")
    assert res.succeeded, res.output
    assert res.data["url"] == f"{site.base}/article"
    assert res.data["redirected_from"] == f"{site.base}/moved"
    assert res.data["title"] == "Rust 1.80 released"


async def test_redirect_loop_is_stopped(wrun: Run, site: Site) -> None:
    res = await wrun("web_fetch", url=f"{site.base}/loop")
    assert res.status is ToolStatus.ERROR
    assert "Too many redirects (more than 5)" in res.output
    assert site.requests.count("/loop") == 6  # the first request and five redirects, then it stopped


async def test_redirect_to_file_url_is_refused(wrun: Run, site: Site) -> None:
    res = await wrun("web_fetch", url=f"{site.base}/to-file")
    assert res.status is ToolStatus.ERROR
    assert "redirected to file:///etc/passwd, which is refused" in res.output
    assert "root:" not in res.output


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("file:///etc/passwd", "Only http:// and https:// addresses can be fetched, not 'file:'"),
        ("ftp://example.com/x", "not 'ftp:'"),
        ("javascript:alert(1)", "not 'javascript:'"),
        ("http://", "has no host name"),
    ],
)
async def test_non_http_urls_are_refused(wrun: Run, url: str, message: str) -> None:
    res = await wrun("web_fetch", url=url)
    assert res.status is ToolStatus.ERROR
    assert message in res.output


async def test_local_addresses_are_refused_by_default(ctx: ToolContext, site: Site, memory_keyring: Any) -> None:
    run = Run(ctx, config={"web": {**web_config(site), "allow_private": False}})
    res = await run("web_fetch", url=f"{site.base}/article")
    assert res.status is ToolStatus.ERROR
    assert "local or private network address (127.0.0.1)" in res.output
    assert site.requests == []  # nothing was sent


async def test_http_error_status_is_a_failure(wrun: Run, site: Site) -> None:
    res = await wrun("web_fetch", url=f"{site.base}/missing")
    assert res.status is ToolStatus.ERROR
    assert "answered HTTP 404 Not Found. The page does not exist" in res.output
    assert res.data["status"] == 404


async def test_fetch_bad_arguments(wrun: Run) -> None:
    res = await wrun("web_fetch", url="")
    assert res.status is ToolStatus.ERROR and "url:" in res.output
    res = await wrun("web_fetch", url="https://example.com", max_chars=10)
    assert res.status is ToolStatus.ERROR and "max_chars" in res.output


# --- fetch: other content types ------------------------------------------------------------------------
async def test_json_is_pretty_printed(wrun: Run, site: Site) -> None:
    res = await wrun("web_fetch", url=f"{site.base}/data.json")
    assert res.succeeded, res.output
    assert res.data["json"] is True
    assert '{\n  "name": "weclaw",\n  "tags": [\n    "a",' in res.output
    assert '"中文": "是"' in res.output


async def test_pdf_and_image_are_described_not_dumped(wrun: Run, site: Site) -> None:
    res = await wrun("web_fetch", url=f"{site.base}/doc.pdf")
    assert res.succeeded, res.output
    assert "a PDF document (application/pdf, 14,009 bytes)" in res.output
    assert "BINARYPDFDATA" not in res.output
    assert res.data["content_type"] == "application/pdf"
    res = await wrun("web_fetch", url=f"{site.base}/image.png")
    assert "an image (PNG)" in res.output and "IMAGEBYTES" not in res.output


async def test_plain_text_is_returned_as_is(wrun: Run, site: Site) -> None:
    res = await wrun("web_fetch", url=f"{site.base}/plain.txt")
    assert res.succeeded
    assert res.output.endswith("line one\nline two\n")


# --- search --------------------------------------------------------------------------------------------
async def test_search_without_keys_uses_duckduckgo(wrun: Run, site: Site) -> None:
    res = await wrun("web_search", query="python", count=5)
    assert res.succeeded, res.output
    assert res.data["backend"] == "duckduckgo"
    assert res.data["results"] == [
        {"title": "Welcome to Python.org", "url": "https://www.python.org/"},
        {"title": "Python 3 documentation", "url": "https://docs.python.org/3/?q=1"},
        {
            "title": "Python (programming language) - Wikipedia",
            "url": "https://en.wikipedia.org/wiki/Python_(programming_language)",
        },
    ]
    assert "The official home of the Python Programming Language." in res.output
    assert "Sponsored" not in res.output
    assert res.data["not_enabled"] == ["brave", "tavily"]
    assert site.queries == [{"backend": "duckduckgo", "q": "python"}]


async def test_search_count_limits_results(wrun: Run) -> None:
    res = await wrun("web_search", query="python", count=1)
    assert [r["url"] for r in res.data["results"]] == ["https://www.python.org/"]


async def test_brave_is_used_once_its_key_exists(wrun: Run, site: Site) -> None:
    SecretStore().set("web.brave_api_key", BRAVE_KEY)
    res = await wrun("web_search", query="beijing weather", count=3)
    assert res.succeeded, res.output
    assert res.data["backend"] == "brave"
    assert res.data["results"][0] == {"title": "Weather in Beijing", "url": "https://weather.example/beijing"}
    assert "Sunny, 25 °C" in res.output
    assert site.queries == [{"backend": "brave", "q": "beijing weather", "count": "3"}]
    assert BRAVE_KEY not in res.for_model()


async def test_tavily_backend_by_name(wrun: Run, site: Site) -> None:
    SecretStore().set("web.tavily_api_key", TAVILY_KEY)
    res = await wrun("web_search", query="agents", backend="tavily", count=4)
    assert res.succeeded, res.output
    assert res.data["backend"] == "tavily"
    assert res.data["results"] == [{"title": "Tavily result", "url": "https://t.example/1"}]
    assert "Some content here" in res.output
    assert site.queries == [{"backend": "tavily", "q": "agents", "max_results": 4}]


async def test_backend_without_key_is_hidden_and_explained(wrun: Run, site: Site) -> None:
    res = await wrun("web_search", query="x", backend="brave")
    assert res.status is ToolStatus.ERROR
    assert "The brave search backend is not enabled" in res.output
    assert "keyring entry 'web.brave_api_key'" in res.output
    assert "Enabled now: duckduckgo" in res.output
    assert site.queries == []
    status = {s["name"]: s for s in backend_status()}
    assert status["brave"]["enabled"] is False and status["tavily"]["enabled"] is False
    assert status["duckduckgo"] == {"name": "duckduckgo", "enabled": True, "needs_key": None, "how_to_enable": ""}


async def test_unknown_backend_is_refused(wrun: Run) -> None:
    res = await wrun("web_search", query="x", backend="google")
    assert res.status is ToolStatus.ERROR
    assert "There is no search backend 'google'. Backends: brave, tavily, duckduckgo" in res.output


async def test_rejected_key_falls_back_to_duckduckgo(wrun: Run, site: Site) -> None:
    SecretStore().set("web.brave_api_key", "wrong-key")
    res = await wrun("web_search", query="python")
    assert res.succeeded, res.output
    assert res.data["backend"] == "duckduckgo"
    assert res.data["failed_backends"] == [
        "brave: Brave Search refused the API key (HTTP 401). Check the key in Settings > Tools > web."
    ]


async def test_search_fails_clearly_when_every_backend_fails(wrun: Run, site: Site) -> None:
    site.ddg_status = 202
    res = await wrun("web_search", query="python")
    assert res.status is ToolStatus.ERROR
    assert "Web search failed. duckduckgo: DuckDuckGo answered HTTP 202" in res.output


async def test_search_works_without_a_keyring(ctx: ToolContext, site: Site, no_keyring: None) -> None:
    run = Run(ctx, config={"web": web_config(site)})
    res = await run("web_search", query="python")
    assert res.succeeded, res.output
    assert res.data["backend"] == "duckduckgo"


async def test_search_bad_arguments(wrun: Run) -> None:
    res = await wrun("web_search", query="")
    assert res.status is ToolStatus.ERROR and "query:" in res.output
    res = await wrun("web_search", query="x", count=100)
    assert res.status is ToolStatus.ERROR and "count:" in res.output


def test_duckduckgo_parser_handles_an_empty_page() -> None:
    assert parse_duckduckgo("", 5) == []
    assert parse_duckduckgo("<html><body>No results.</body></html>", 5) == []


def test_web_config_defaults_are_public_and_safe() -> None:
    """Tests override the base URLs; the shipped defaults must be the public endpoints."""
    from weclaw_desktop.tools.web import WebConfig

    cfg = WebConfig()
    assert cfg.duckduckgo_url.startswith("https://") and cfg.allow_private is False
    assert json.loads(json.dumps(cfg.model_dump()))["max_redirects"] == 5


def test_very_large_html_skips_readability_but_keeps_text() -> None:
    from weclaw_desktop.tools.web.extract import READABILITY_MAX_CHARS, html_to_text

    paragraph = "<p>" + "word " * 200 + "</p>"
    page = "<html><head><title>Big</title><script>var x = 'NOPE';</script></head><body><nav>Menu</nav>"
    page += paragraph * (READABILITY_MAX_CHARS // len(paragraph) + 10) + "</body></html>"
    result = html_to_text(page)
    assert result.method == "page"
    assert result.title == "Big"
    assert result.text.startswith("word word") and "NOPE" not in result.text and "Menu" not in result.text
