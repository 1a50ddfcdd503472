"""Our own MCP server on the SDK's low-level ``Server``: raw schemas and the parts of the protocol the
reference servers do not cover the way we need (recursion, free-form objects, destructive tools,
elicitation, sampling, roots, log messages, resources, prompts, task-only tools, non-ASCII names, base64
in structured content), and OAuth over HTTP with a small in-memory authorization server of the SDK.

    python sdk_server.py                    stdio
    python sdk_server.py http PORT          streamable HTTP on 127.0.0.1:PORT/mcp
    python sdk_server.py http PORT --oauth  the same behind OAuth 2.1 (DCR, PKCE, refresh; tokens live
                                            TOKEN_TTL seconds); authorisation is granted at once

Every call is appended to WECLAW_TEST_CALLS (one line: the tool name, then its arguments as JSON).
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import sys
import time
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
# A bigger picture (about 12 KB of base64) so a leak into the model's text would be obvious.
BIG_PNG = base64.b64encode(base64.b64decode(PNG_1PX) + b"\0" * 9000).decode()

SELF_REFERENCING: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "root": {"$ref": "#/$defs/Node", "description": "The top folder"},
        "mirror": {"$ref": "#", "description": "Another request of the same shape"},
    },
    "required": ["root"],
    "$defs": {
        "Node": {
            "type": "object",
            "description": "A file or a folder",
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            },
            "required": ["name"],
        }
    },
}
OBJ: dict[str, Any] = {"type": "object"}


def _tool(name: str, description: str, schema: dict[str, Any] | None = None, **extra: Any) -> types.Tool:
    return types.Tool(
        name=name, description=description, input_schema=schema or {"type": "object", "properties": {}}, **extra
    )


TOOLS = [
    _tool("write_tree", "Create a folder tree (a recursive schema).", SELF_REFERENCING),
    _tool("configure", "Set any options (free-form arguments).", {"type": "object", "additionalProperties": True}),
    _tool(
        "tag",
        "Tag an item with free-form options.",
        {"type": "object", "properties": {"item": {"type": "string"}, "options": OBJ}, "required": ["item"]},
    ),
    _tool(
        "reset_repo",
        "Reset the repository to a commit, discarding changes.",
        {"type": "object", "properties": {"commit": {"type": "string"}}, "required": ["commit"]},
        annotations=types.ToolAnnotations(destructive_hint=True),
    ),
    _tool(
        "lookup",
        "Look a word up.",
        {"type": "object", "properties": {"word": {"type": "string"}}},
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
    _tool(
        "fetch_page",
        "Fetch a web page.",
        {"type": "object", "properties": {"url": {"type": "string"}}},
        annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=True),
    ),
    _tool("ask_user", "Ask the user for their details (elicitation)."),
    _tool(
        "summarize",
        "Summarise a text with the client's model (sampling).",
        {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    ),
    _tool("where", "The folders the client allows (roots)."),
    _tool("shout_log", "Send a warning log message."),
    _tool("snapshot", "A screenshot, also inside the structured content."),
    _tool("统计", "Count things (a Chinese name)."),
    _tool("統計", "Count things (the traditional spelling)."),
    _tool("long_job", "Runs only as a task.", execution=types.ToolExecution(task_support="required")),
]

ELICIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "minLength": 1},
        "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
        "color": {"type": "string", "title": "Favourite colour", "enum": ["red", "green", "blue"]},
        "subscribe": {"type": "boolean", "title": "Subscribe to news", "default": False},
    },
    "required": ["name", "color"],
}


def record(name: str, arguments: dict[str, Any]) -> None:
    path = os.environ.get("WECLAW_TEST_CALLS")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{name} {json.dumps(arguments, ensure_ascii=False, sort_keys=True)}\n")


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=value)])


def _count(node: Any) -> int:
    return 1 + sum(_count(c) for c in node.get("children", [])) if isinstance(node, dict) else 0


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    name, args = params.name, dict(params.arguments or {})
    record(name, args)
    session = ctx.session
    if name == "write_tree":
        return text(f"created {_count(args.get('root'))} nodes")
    if name in ("configure", "tag"):
        return text(json.dumps(args, sort_keys=True))
    if name == "reset_repo":
        return text(f"reset to {args.get('commit')}")
    if name == "lookup":
        return text(f"{args.get('word')}: a word")
    if name == "fetch_page":
        return text(f"<html>{args.get('url')}</html>")
    if name == "ask_user":
        answer = await session.elicit_form("Who are you?", ELICIT_SCHEMA, related_request_id=ctx.request_id)
        return text(json.dumps({"action": answer.action, "content": answer.content}, sort_keys=True))
    if name == "summarize":
        try:
            result = await session.create_message(
                [
                    types.SamplingMessage(
                        role="user", content=types.TextContent(type="text", text=f"Summarise: {args['text']}")
                    )
                ],
                max_tokens=50,
                system_prompt="You write one-line summaries.",
                related_request_id=ctx.request_id,
            )
        except Exception as exc:  # the client declined
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"sampling refused: {exc}")], is_error=True
            )
        content = result.content
        return text(f"summary by {result.model}: {getattr(content, 'text', '')}")
    if name == "where":
        roots = await session.list_roots()
        return text(json.dumps([str(r.uri) for r in roots.roots]))
    if name == "shout_log":
        await session.send_log_message("warning", "disk almost full", logger="disk", related_request_id=ctx.request_id)
        return text("logged")
    if name == "snapshot":
        return types.CallToolResult(
            content=[types.ImageContent(type="image", data=BIG_PNG, mime_type="image/png")],
            structured_content={"image": {"data": BIG_PNG, "mimeType": "image/png"}, "width": 1, "height": 1},
        )
    if name in ("统计", "統計"):
        return text(f"{name}: 3")
    raise ValueError(f"unknown tool {name}")


async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
    return types.ListResourcesResult(
        resources=[
            types.Resource(
                uri="note://readme", name="readme", description="How to use this server", mime_type="text/plain"
            ),
            types.Resource(uri="note://logo", name="logo", mime_type="image/png"),
        ]
    )


async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(
        resource_templates=[
            types.ResourceTemplate(uri_template="note://items/{id}", name="item", description="One item")
        ]
    )


async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    uri = str(params.uri)
    record("read_resource", {"uri": uri})
    if uri == "note://readme":
        contents: list[Any] = [
            types.TextResourceContents(uri=uri, text="Call lookup to look words up.", mime_type="text/plain")
        ]
    elif uri == "note://logo":
        contents = [types.BlobResourceContents(uri=uri, blob=PNG_1PX, mime_type="image/png")]
    elif uri.startswith("note://items/"):
        contents = [types.TextResourceContents(uri=uri, text=f"item {uri.rsplit('/', 1)[-1]}")]
    else:
        raise ValueError(f"no resource {uri}")
    return types.ReadResourceResult(contents=contents)


async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
    return types.ListPromptsResult(
        prompts=[
            types.Prompt(
                name="review",
                description="Review a file",
                arguments=[
                    types.PromptArgument(name="file", description="The file to review", required=True),
                    types.PromptArgument(name="focus", description="What to look at"),
                ],
            )
        ]
    )


async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
    args = params.arguments or {}
    record("get_prompt", {"name": params.name, **args})
    focus = f" Focus on {args['focus']}." if args.get("focus") else ""
    return types.GetPromptResult(
        description="Review",
        messages=[
            types.PromptMessage(
                role="user", content=types.TextContent(type="text", text=f"Please review {args.get('file')}.{focus}")
            )
        ],
    )


server: Server[Any] = Server(
    "weclaw-sdk-test",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_list_resources=list_resources,
    on_list_resource_templates=list_templates,
    on_read_resource=read_resource,
    on_list_prompts=list_prompts,
    on_get_prompt=get_prompt,
)


# --- OAuth: an in-memory authorization server that grants at once -----------------------------------
TOKEN_TTL = int(os.environ.get("TOKEN_TTL", "3600"))


class MemoryAuth:
    def __init__(self) -> None:
        from mcp.server.auth.provider import AccessToken, AuthorizationCode, RefreshToken

        self.AccessToken, self.AuthorizationCode, self.RefreshToken = AccessToken, AuthorizationCode, RefreshToken
        self.clients: dict[str, Any] = {}
        self.codes: dict[str, Any] = {}
        self.tokens: dict[str, Any] = {}
        self.refresh: dict[str, Any] = {}

    async def get_client(self, client_id: str) -> Any:
        return self.clients.get(client_id)

    async def register_client(self, client_info: Any) -> None:
        self.clients[client_info.client_id] = client_info
        record("oauth_register", {"redirect_uris": [str(u) for u in client_info.redirect_uris or []]})

    async def authorize(self, client: Any, params: Any) -> str:
        from mcp.server.auth.provider import construct_redirect_uri

        code = secrets.token_urlsafe(16)
        self.codes[code] = self.AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        record("oauth_authorize", {"pkce": bool(params.code_challenge)})
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: Any, authorization_code: str) -> Any:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> Any:
        from mcp.shared.auth import OAuthToken

        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.tokens[access] = self.AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=int(time.time()) + TOKEN_TTL, resource=resource
        )
        self.refresh[refresh] = self.RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=TOKEN_TTL, refresh_token=refresh)

    async def exchange_authorization_code(self, client: Any, authorization_code: Any) -> Any:
        self.codes.pop(authorization_code.code, None)
        record("oauth_token", {"grant": "authorization_code"})
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client: Any, refresh_token: str) -> Any:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client: Any, refresh_token: Any, scopes: list[str]) -> Any:
        self.refresh.pop(refresh_token.token, None)
        record("oauth_token", {"grant": "refresh_token"})
        return self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> Any:
        found = self.tokens.get(token)
        if found is not None and found.expires_at is not None and found.expires_at < time.time():
            return None
        return found

    async def revoke_token(self, token: Any) -> None:
        self.tokens.pop(getattr(token, "token", ""), None)


def main() -> None:
    if len(sys.argv) >= 3 and sys.argv[1] == "http":
        import uvicorn

        port = int(sys.argv[2])
        kwargs: dict[str, Any] = {}
        if "--oauth" in sys.argv:
            from mcp.server.auth.provider import ProviderTokenVerifier
            from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions

            base = f"http://127.0.0.1:{port}"
            provider = MemoryAuth()
            kwargs = {
                "auth": AuthSettings(
                    issuer_url=base,
                    resource_server_url=f"{base}/mcp",
                    client_registration_options=ClientRegistrationOptions(enabled=True),
                    validate_token_resource=False,
                ),
                "auth_server_provider": provider,
                "token_verifier": ProviderTokenVerifier(provider),
            }
        app = server.streamable_http_app(host="127.0.0.1", **kwargs)
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
    else:
        import anyio
        from mcp.server.stdio import stdio_server

        async def run() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(run)


if __name__ == "__main__":
    main()
