"""Listing what a server offers besides tools: resources, resource templates and prompts (paged)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import mcp_types as types
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

log = logging.getLogger("weclaw.mcp")
T = TypeVar("T")
MAX_PAGES = 20  # a server that pages forever must not hang the start


async def _pages(fetch: Callable[[types.PaginatedRequestParams | None], Awaitable[Any]], field: str) -> list[Any]:
    out: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await fetch(types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        out.extend(getattr(page, field))
        cursor = page.next_cursor
        if not cursor:
            break
    return out


async def list_features(
    session: ClientSession, caps: types.ServerCapabilities | None, server: str
) -> tuple[list[types.Resource], list[types.ResourceTemplate], list[types.Prompt]]:
    """What the server's capabilities say it has; a listing that fails is logged and left empty."""
    resources: list[types.Resource] = []
    templates: list[types.ResourceTemplate] = []
    prompts: list[types.Prompt] = []
    if caps is not None and caps.resources is not None:
        try:
            resources = await _pages(lambda p: session.list_resources(params=p), "resources")
            templates = await _pages(lambda p: session.list_resource_templates(params=p), "resource_templates")
        except MCPError as exc:
            log.warning("MCP server %s: listing resources failed: %s", server, exc.message)
    if caps is not None and caps.prompts is not None:
        try:
            prompts = await _pages(lambda p: session.list_prompts(params=p), "prompts")
        except MCPError as exc:
            log.warning("MCP server %s: listing prompts failed: %s", server, exc.message)
    return resources, templates, prompts
