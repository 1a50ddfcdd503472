"""OAuth 2.1 for remote MCP servers, through the SDK's client (discovery, registration, PKCE, refresh).

What WeClaw adds around :class:`mcp.client.auth.OAuthClientProvider`:

- :class:`KeyringTokenStorage`: the tokens and the registered client live in the keyring
  (``mcp.<server>.oauth.tokens`` / ``.client``, JSON), never in settings.json or a log; the token's expiry
  time is kept with it, so after a restart an expired token is refreshed instead of sent;
- :class:`LoopbackRedirect`: the redirect URI is ``http://127.0.0.1:<port>/callback`` (RFC 8252 loopback);
  the port is chosen once per server and kept with the client registration (servers register exact
  redirect URIs). The listener runs only while a sign-in waits, answers one request with the code and
  state, and shows a page saying the window can be closed;
- the browser is opened through the hooks' ``open_url`` (the GUI: the desktop's browser; the CLI also
  prints the address; tests: a client that follows the redirects).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import time
import webbrowser
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs, urlparse

from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl, ValidationError

from weclaw_desktop.secrets import SecretStore

log = logging.getLogger("weclaw.mcp")

SIGN_IN_TIMEOUT_S = 300.0
OpenUrl = Callable[[str], Awaitable[None]]
_DONE_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>WeClaw</title>"
    b"<p style='font:16px system-ui;margin:3em'>Signed in. You can close this window and return to WeClaw."
    b"<br>\xe5\xb7\xb2\xe7\x99\xbb\xe5\xbd\x95\xef\xbc\x8c\xe5\x8f\xaf\xe4\xbb\xa5\xe5\x85\xb3\xe9\x97\xad\xe6\xad\xa4\xe7\xaa\x97\xe5\x8f\xa3\xe3\x80\x82"
)


def oauth_key(server: str, part: str) -> str:
    return f"mcp.{server}.oauth.{part}"


async def browser(url: str) -> None:
    """Open ``url`` in the user's browser (the default ``open_url``)."""
    await asyncio.to_thread(webbrowser.open, url)


class KeyringTokenStorage:
    """The SDK's TokenStorage on the keyring."""

    def __init__(self, server: str, store: SecretStore) -> None:
        self.server = server
        self.store = store

    async def _get(self, part: str) -> dict[str, object] | None:
        raw = await asyncio.to_thread(self.store.get, oauth_key(self.server, part))
        if not raw:
            return None
        try:
            value = json.loads(raw)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    async def _set(self, part: str, value: dict[str, object]) -> None:
        await asyncio.to_thread(self.store.set, oauth_key(self.server, part), json.dumps(value))

    async def get_tokens(self) -> OAuthToken | None:
        data = await self._get("tokens")
        if data is None:
            return None
        try:
            return OAuthToken.model_validate(data.get("token"))
        except ValidationError:
            return None

    async def expires_at(self) -> float | None:
        data = await self._get("tokens")
        value = data.get("expires_at") if data else None
        return float(value) if isinstance(value, int | float) else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires_at = time.time() + tokens.expires_in if tokens.expires_in else None
        await self._set("tokens", {"token": tokens.model_dump(mode="json"), "expires_at": expires_at})

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        data = await self._get("client")
        if data is None:
            return None
        try:
            return OAuthClientInformationFull.model_validate(data)
        except ValidationError:
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        await self._set("client", client_info.model_dump(mode="json", exclude_none=True))

    def forget(self) -> None:
        """Sign out: remove the tokens and the registration."""
        for part in ("tokens", "client", "port"):
            self.store.delete(oauth_key(self.server, part))


class LoopbackRedirect:
    """Receives the authorization redirect on 127.0.0.1 (one request, then it closes)."""

    def __init__(self, port: int, timeout_s: float = SIGN_IN_TIMEOUT_S) -> None:
        self.port = port
        self.timeout_s = timeout_s
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/callback"

    async def start(self) -> None:
        await self.close()
        self._result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1")
            while (await asyncio.wait_for(reader.readline(), 10)) not in (b"\r\n", b"\n", b""):
                pass
            parts = line.split(" ")
            query = parse_qs(urlparse(parts[1]).query) if len(parts) > 1 else {}
            code = (query.get("code") or [""])[0]
            state = (query.get("state") or [""])[0] or None
            error = (query.get("error") or [""])[0]
            body = _DONE_PAGE if code else b"<!doctype html><p>Sign-in failed: " + error.encode()[:200]
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nConnection: close\r\n")
            writer.write(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            await writer.drain()
            if self._result is not None and not self._result.done() and (code or error):
                if code:
                    self._result.set_result(AuthorizationCodeResult(code=code, state=state))
                else:
                    self._result.set_exception(RuntimeError(f"the sign-in was refused: {error}"))
        except (TimeoutError, OSError, UnicodeError):
            pass
        finally:
            with contextlib.suppress(OSError):
                writer.close()

    async def wait(self) -> AuthorizationCodeResult:
        """The redirect's code and state, within :data:`SIGN_IN_TIMEOUT_S`."""
        assert self._result is not None, "start() first"
        try:
            return await asyncio.wait_for(asyncio.shield(self._result), self.timeout_s)
        except TimeoutError:
            raise RuntimeError(f"no sign-in arrived within {self.timeout_s:g} s") from None
        finally:
            await self.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def redirect_port(server: str, store: SecretStore) -> int:
    """The loopback port of this server's redirect URI (chosen once, kept with its registration)."""
    raw = store.get(oauth_key(server, "port"))
    if raw and raw.isdigit():
        return int(raw)
    port = _free_port()
    store.set(oauth_key(server, "port"), str(port))
    return port


class _Provider(OAuthClientProvider):
    """The SDK's provider, which also restores the stored token's expiry time (so it refreshes)."""

    def __init__(
        self,
        server_url: str,
        client_metadata: OAuthClientMetadata,
        storage: KeyringTokenStorage,
        redirect_handler: Callable[[str], Awaitable[None]],
        callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]],
    ) -> None:
        super().__init__(
            server_url,
            client_metadata,
            storage,
            redirect_handler=redirect_handler,
            callback_handler=callback_handler,
        )
        self._keyring = storage

    async def _initialize(self) -> None:
        await super()._initialize()
        expires_at = await self._keyring.expires_at()
        if expires_at is not None and self.context.current_tokens is not None:
            self.context.token_expiry_time = expires_at


def oauth_provider(
    server: str, url: str, store: SecretStore, *, open_url: OpenUrl | None = None, scope: str | None = None
) -> OAuthClientProvider:
    """The httpx auth for a server that signs in with OAuth."""
    storage = KeyringTokenStorage(server, store)
    redirect = LoopbackRedirect(redirect_port(server, store))
    opener = open_url or browser

    async def on_redirect(authorization_url: str) -> None:
        await redirect.start()
        log.info("MCP server %s: sign-in needed; opening the browser", server)
        await opener(authorization_url)

    metadata = OAuthClientMetadata(
        client_name="WeClaw Desktop",
        redirect_uris=[AnyUrl(redirect.uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
        scope=scope,
    )
    return _Provider(
        server_url=url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=on_redirect,
        callback_handler=redirect.wait,
    )
