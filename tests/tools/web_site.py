"""A local aiohttp site that the web tool tests fetch from and search against (127.0.0.1 only)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

ARTICLE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Rust 1.80 released</title>
<script>var tracking = "SECRET_SCRIPT_TEXT";</script><style>body { color: red }</style></head>
<body>
<nav><a href="/">Home</a> <a href="/news">News</a> <a href="/about">About us</a></nav>
<article>
<h1>Rust 1.80 released</h1>
<p>The Rust team is happy to announce a new version of Rust, 1.80.0. Rust is a programming language
empowering everyone to build reliable and efficient software.</p>
<p>This release stabilises LazyCell and LazyLock, which delay the initialisation of their data until
first access. They are similar to the OnceCell and OnceLock types stabilised in 1.70.</p>
<p>Exclusive ranges in patterns are also stable now. See the <a href="/notes">detailed release notes</a>
for everything else in this release, and thanks to the many contributors who made it happen.</p>
<ul><li>LazyCell and LazyLock</li><li>Exclusive ranges</li></ul>
</article>
<footer>Copyright footer text <a href="/legal">Legal</a> <a href="#top">Top</a></footer>
</body></html>"""

GBK_PAGE = (
    "<html><head><meta http-equiv='Content-Type' content='text/html; charset=gb2312'><title>天气预报</title></head>"
    "<body><div><p>北京今天晴，最高气温二十五度，最低气温十二度。空气质量良好，适合户外活动。"
    "明天多云转阴，傍晚可能有小雨，出门请带伞。后天气温回升，风力三到四级。</p>"
    "<p>上海今天多云，最高气温二十八度。未来三天以阴天为主，湿度较大，注意防潮。</p>"
    "<p>广州今天雷阵雨，最高气温三十二度。</p></div></body></html>"
).encode("gb18030")

DDG_PAGE = """<html><body><div id="links">
<div class="result results_links result--ad"><a class="result__a" href="https://ads.example/buy">Sponsored thing</a>
<a class="result__snippet">An advert</a></div>
<div class="result results_links"><h2 class="result__title">
<a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.python.org%2F&amp;rut=abc">Welcome to <b>Python</b>.org</a></h2>
<a class="result__snippet" href="#">The official home of the <b>Python</b> Programming Language.</a></div>
<div class="result results_links"><h2 class="result__title">
<a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fdocs.python.org%2F3%2F%3Fq%3D1&amp;rut=def">Python 3 documentation</a></h2>
<a class="result__snippet" href="#">Documentation for Python 3.</a></div>
<div class="result results_links"><h2 class="result__title">
<a rel="nofollow" class="result__a" href="https://en.wikipedia.org/wiki/Python_(programming_language)">Python (programming language) - Wikipedia</a></h2>
<a class="result__snippet" href="#">Python is a high-level language.</a></div>
</div></body></html>"""

BRAVE_KEY = "brave-test-key-123"
TAVILY_KEY = "tvly-test-key-456"


@dataclass
class Site:
    base: str = ""
    huge_sent: int = 0
    huge_done: asyncio.Event = field(default_factory=asyncio.Event)
    requests: list[str] = field(default_factory=list)
    queries: list[dict[str, Any]] = field(default_factory=list)
    ddg_status: int = 200


def build_app(site: Site) -> web.Application:
    async def article(request: web.Request) -> web.Response:
        return web.Response(text=ARTICLE, content_type="text/html")

    async def gbk(request: web.Request) -> web.Response:
        return web.Response(body=GBK_PAGE, headers={"Content-Type": "text/html"})

    async def huge(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/html; charset=utf-8"})
        await resp.prepare(request)
        chunk = ("<p>" + "lorem ipsum dolor sit amet " * 40 + "</p>\n").encode()
        try:
            await resp.write(b"<html><head><title>Huge</title></head><body>")
            for _ in range(100_000):  # ~110 MB if nobody stops reading
                await resp.write(chunk)
                site.huge_sent += len(chunk)
        except (ConnectionResetError, asyncio.CancelledError, RuntimeError):
            pass
        finally:
            site.huge_done.set()
        return resp

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(10)
        return web.Response(text="<p>finally</p>", content_type="text/html")

    async def loop(request: web.Request) -> web.Response:
        raise web.HTTPFound("/loop")

    async def to_article(request: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently("/article")

    async def to_file(request: web.Request) -> web.Response:
        raise web.HTTPFound("file:///etc/passwd")

    async def data_json(request: web.Request) -> web.Response:
        return web.json_response({"name": "weclaw", "tags": ["a", "b"], "nested": {"n": 1, "中文": "是"}})

    async def pdf(request: web.Request) -> web.Response:
        return web.Response(body=b"%PDF-1.7\n" + b"\x00BINARYPDFDATA" * 1000, content_type="application/pdf")

    async def image(request: web.Request) -> web.Response:
        return web.Response(body=b"\x89PNG\r\n\x1a\nIMAGEBYTES" * 100, content_type="image/png")

    async def plain(request: web.Request) -> web.Response:
        return web.Response(text="line one\nline two\n", content_type="text/plain")

    async def missing(request: web.Request) -> web.Response:
        return web.Response(status=404, text="<h1>Not here</h1>", content_type="text/html")

    async def ddg(request: web.Request) -> web.Response:
        form = await request.post()
        site.queries.append({"backend": "duckduckgo", "q": form.get("q")})
        if site.ddg_status != 200:
            return web.Response(status=site.ddg_status, text="")
        return web.Response(text=DDG_PAGE, content_type="text/html")

    async def brave(request: web.Request) -> web.Response:
        site.queries.append({"backend": "brave", "q": request.query.get("q"), "count": request.query.get("count")})
        if request.headers.get("X-Subscription-Token") != BRAVE_KEY:
            return web.json_response({"error": "bad key"}, status=401)
        results = [
            {"title": "<strong>Weather</strong> in Beijing", "url": "https://weather.example/beijing",
             "description": "Sunny, <strong>25</strong> °C"},
            {"title": "Beijing forecast", "url": "https://forecast.example/bj", "description": "Ten-day forecast"},
        ]  # fmt: skip
        return web.json_response({"type": "search", "web": {"results": results}})

    async def tavily(request: web.Request) -> web.Response:
        body = await request.json()
        site.queries.append({"backend": "tavily", "q": body.get("query"), "max_results": body.get("max_results")})
        if request.headers.get("Authorization") != f"Bearer {TAVILY_KEY}":
            return web.json_response({"detail": "Unauthorized"}, status=401)
        results = [
            {"title": "Tavily result", "url": "https://t.example/1", "content": "Some   content  here", "score": 0.9}
        ]
        return web.json_response({"query": body.get("query"), "results": results})

    @web.middleware
    async def record(request: web.Request, handler: Any) -> web.StreamResponse:
        site.requests.append(request.path)
        return await handler(request)

    app = web.Application(middlewares=[record])
    app.add_routes(
        [
            web.get("/article", article),
            web.get("/gbk", gbk),
            web.get("/huge", huge),
            web.get("/slow", slow),
            web.get("/loop", loop),
            web.get("/moved", to_article),
            web.get("/to-file", to_file),
            web.get("/data.json", data_json),
            web.get("/doc.pdf", pdf),
            web.get("/image.png", image),
            web.get("/plain.txt", plain),
            web.get("/missing", missing),
            web.post("/ddg/html/", ddg),
            web.get("/brave/search", brave),
            web.post("/tavily/search", tavily),
        ]
    )
    return app


def web_config(site: Site, **extra: Any) -> dict[str, Any]:
    """The web tool's config pointing every backend at the local site."""
    return {
        "allow_private": True,
        "use_system_proxy": False,  # a proxy in the environment must not see loopback test traffic
        "duckduckgo_url": f"{site.base}/ddg/html/",
        "brave_url": f"{site.base}/brave/search",
        "tavily_url": f"{site.base}/tavily/search",
        "timeout_s": 5,
        "search_timeout_s": 5,
        **extra,
    }
