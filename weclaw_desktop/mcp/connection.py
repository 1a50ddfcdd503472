"""One MCP server connection: started, watched, and restarted with backoff, on the asyncio loop.

The ``mcp`` SDK's transports and sessions use anyio task groups, which must be entered and left in the
same task. So each server runs in one long-lived task that owns its transport and session from start
to stop; other tasks call tools through the session (the SDK correlates requests), and ask the owner
task to stop or restart through an event. The owner task notices a dead server when a call finds the
connection closed, or through a ping every ``health_interval`` seconds, and then reconnects after
``Backoff`` (1 s, 2 s, 4 s ... up to a minute; the count starts again after a good connection).

Stopping closes the server's stdin, waits for it, then kills its process group (the SDK's shutdown,
shielded from cancellation), so no server process outlives its connection. A stdio server runs under the
tool supervisor (``tools/lifetime.watching_parent``): if the app dies without stopping it (``kill -9``, a
crash), the supervisor notices its parent is gone and kills the server's process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.sse import sse_client
from mcp.client.stdio import get_default_environment
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from weclaw_desktop.frozen import child_environ
from weclaw_desktop.i18n import Text
from weclaw_desktop.mcp import features
from weclaw_desktop.mcp.callbacks import session_callbacks
from weclaw_desktop.mcp.config import resolve, settings_problem, working_dir
from weclaw_desktop.mcp.errlog import StderrSink
from weclaw_desktop.mcp.interact import ClientHooks
from weclaw_desktop.mcp.oauth import SIGN_IN_TIMEOUT_S, oauth_provider
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import McpServerSettings
from weclaw_desktop.toolkit.diagnostics import Code
from weclaw_desktop.toolkit.redact import redact
from weclaw_desktop.tools import lifetime

log = logging.getLogger("weclaw.mcp")

CLIENT_INFO = types.Implementation(name="weclaw-desktop", version="1")


class ServerState(StrEnum):
    STOPPED = "stopped"
    CONNECTING = "connecting"
    CONNECTED = "connected"
    DOWN = "down"


class ServerUnavailableError(RuntimeError):
    """The server is not connected; the message says why and when it is retried."""


class CallTimeoutError(RuntimeError):
    """A tool call got no answer in time (the server is asked to cancel it)."""


@dataclass(frozen=True)
class Backoff:
    initial: float = 1.0
    factor: float = 2.0
    maximum: float = 60.0

    def delay(self, attempt: int) -> float:
        return float(min(self.maximum, self.initial * self.factor**attempt))


class McpConnection:
    def __init__(
        self,
        settings: McpServerSettings,
        secrets: SecretStore,
        *,
        backoff: Backoff | None = None,
        health_interval: float = 15.0,
        connect_timeout: float = 30.0,
        log_dir: Path | None = None,
        on_change: Callable[[McpConnection], None] | None = None,
        hooks: ClientHooks | None = None,
    ) -> None:
        self.settings = settings
        self.hooks = hooks or ClientHooks()
        self.secrets = secrets
        self.backoff = backoff or Backoff()
        self.health_interval = health_interval
        self.connect_timeout = connect_timeout
        self.log_dir = log_dir
        self.on_change = on_change
        self.state = ServerState.STOPPED
        self.tools: list[types.Tool] = []
        self.resources: list[types.Resource] = []  # what the server offers besides tools (listed at connect)
        self.templates: list[types.ResourceTemplate] = []
        self.prompts: list[types.Prompt] = []
        self.capabilities: types.ServerCapabilities | None = None
        self.server_info: types.Implementation | None = None
        self.instructions = ""
        self.error = ""
        self.error_code = Code.SERVER_UNAVAILABLE
        self.retry_at: float | None = None  # monotonic time of the next attempt while down
        self.retry_delay: float | None = None  # the backoff chosen for it
        self.attempts = 0
        self._session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._stopping = False
        self._restart = False
        self._broken = ""
        self._check = False
        self._relist = False
        self._stderr: StderrSink | None = None
        self._http_status: int | None = None

    @property
    def name(self) -> str:
        return self.settings.name

    # --- control (any task) ---------------------------------------------------------------------
    def start(self) -> None:
        if self._task is not None and not self._task.done():
            return
        self._stopping = False
        self._wake = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"mcp:{self.name}")

    async def stop(self, grace_s: float = 10.0) -> None:
        """Disconnect and end the server process; waits for the shutdown to finish."""
        task = self._task
        self._stopping = True
        self._wake.set()
        if task is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), grace_s)
        except TimeoutError:
            log.warning("MCP server %s did not stop in %.0f s; cancelling", self.name, grace_s)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        except asyncio.CancelledError:
            task.cancel()
            raise
        self._task = None

    def restart(self) -> None:
        """Reconnect now (after a settings change or from the UI), without waiting for the backoff."""
        self._restart = True
        self.attempts = 0
        self._wake.set()
        if self._task is None or self._task.done():
            self.start()

    def check_now(self) -> None:
        """Ping the server at once (after a call timed out: is it hung or just slow?)."""
        self._check = True
        self._wake.set()

    async def wait_for(self, *states: ServerState, within: float = 30.0) -> bool:
        """Wait until the connection is in one of ``states``; False on timeout."""
        deadline = time.monotonic() + within
        while self.state not in states:
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.02)
        return True

    # --- calls ----------------------------------------------------------------------------------
    async def call_tool(
        self, name: str, arguments: dict[str, Any], *, read_timeout_s: float, progress: ProgressFnT | None = None
    ) -> types.CallToolResult:
        session = self._session
        if session is None or self.state is not ServerState.CONNECTED:
            raise ServerUnavailableError(f"{self.status_text()}. Tell the user, or use another tool.")
        try:
            result = await session.call_tool(
                name, arguments, read_timeout_seconds=read_timeout_s, progress_callback=progress
            )
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._mark_broken("the connection closed during a call (the server may have crashed)")
                raise ServerUnavailableError(
                    f"MCP server '{self.name}' closed the connection during the call (it may have crashed). "
                    "It is being restarted; try again in a moment or use another tool."
                ) from None
            if exc.code == REQUEST_TIMEOUT:
                self.check_now()
                raise CallTimeoutError(f"no answer from MCP server '{self.name}' within {read_timeout_s:g} s") from None
            raise
        if not isinstance(result, types.CallToolResult):
            raise ServerUnavailableError(f"MCP server '{self.name}' sent an answer WeClaw does not support")
        return result

    def status_message(self) -> Text:
        """The server's state for people (rendered in the UI language when shown)."""
        if self.state is ServerState.CONNECTED:
            return Text("mcp.state.connected", name=self.name)
        if self.state is ServerState.CONNECTING:
            return Text("mcp.state.connecting", name=self.name)
        if self.state is ServerState.STOPPED:
            return Text("mcp.state.stopped", name=self.name)
        error = self.error or Text("mcp.state.unknown_error")
        if self.retry_at is not None:
            s = round(max(0.0, self.retry_at - time.monotonic()))
            return Text("mcp.state.down_retrying", name=self.name, error=error, n=s)
        return Text("mcp.state.down", name=self.name, error=error)

    def status_text(self) -> str:
        """:meth:`status_message` in English (the log, the model, diagnostics)."""
        return self.status_message().render("en")

    # --- the owner task -------------------------------------------------------------------------
    def _set(self, state: ServerState) -> None:
        if state is self.state:
            return
        self.state = state
        log.info("MCP server %s: %s%s", self.name, state.value, f" ({self.error})" if state is ServerState.DOWN else "")
        self._notify()

    async def _remember_status(self, response: Any) -> None:
        """An HTTP error status, for the diagnostic (the SDK reports only "an error response")."""
        if response.status_code >= 400:
            self._http_status = int(response.status_code)

    async def _on_message(self, message: types.ServerNotification | Exception) -> None:
        if isinstance(
            message,
            types.ToolListChangedNotification
            | types.ResourceListChangedNotification
            | types.PromptListChangedNotification,
        ):
            self._relist = True
            self._wake.set()

    async def _describe_features(self, session: ClientSession, init: types.InitializeResult) -> None:
        """Resources, templates and prompts, for the composer's pickers and the read_resource action."""
        caps = self.capabilities = init.capabilities
        self.resources, self.templates, self.prompts = await features.list_features(session, caps, self.name)

    # --- resources and prompts (the composer, the read_resource action) ------------------------
    def _live(self) -> ClientSession:
        session = self._session
        if session is None or self.state is not ServerState.CONNECTED:
            raise ServerUnavailableError(f"{self.status_text()}. Tell the user, or use another tool.")
        return session

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        try:
            return await self._live().read_resource(uri)
        except MCPError as exc:
            raise ServerUnavailableError(
                f"MCP server '{self.name}' could not read {uri}: {redact(exc.message)}"
            ) from None

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> types.GetPromptResult:
        try:
            return await self._live().get_prompt(name, arguments)
        except MCPError as exc:
            raise ServerUnavailableError(
                f"MCP server '{self.name}' refused prompt '{name}': {redact(exc.message)}"
            ) from None

    async def roots_changed(self) -> None:
        """Tell the server the allowed folders changed (it lists them again)."""
        session = self._session
        if session is not None and self.hooks.roots is not None:
            with contextlib.suppress(Exception):
                await session.send_roots_list_changed()

    def _notify(self) -> None:
        if self.on_change is not None:
            try:
                self.on_change(self)
            except Exception:
                log.exception("MCP state listener failed")

    def _mark_broken(self, reason: str) -> None:
        if not self._broken:
            self._broken = reason
        self._wake.set()

    async def _sleep(self, seconds: float | None) -> None:
        self._wake.clear()
        if self._stopping or self._restart or self._broken or self._check or self._relist:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)

    async def _run(self) -> None:
        try:
            while not self._stopping:
                self._restart = False
                self._broken = ""
                self._check = False
                self._relist = False
                problem = settings_problem(self.settings)
                if problem:
                    await self._down(problem, Code.CONFIG_MISSING, retry=False)
                    continue
                self.error_code = Code.SERVER_UNAVAILABLE
                self._set(ServerState.CONNECTING)
                was_connected = False
                try:
                    was_connected = await self._session_once()
                except asyncio.CancelledError:
                    raise
                except _MissingSecrets as exc:
                    await self._down(str(exc), Code.AUTH_MISSING, retry=False)
                    continue
                except Exception as exc:
                    self.error = self._describe(exc)
                finally:
                    self._session = None
                if self._stopping:
                    break
                if was_connected:
                    self.attempts = 0
                if self._restart:
                    continue
                await self._down(self.error, Code.SERVER_UNAVAILABLE, retry=True)
        finally:
            self._session = None
            self.retry_at = None
            self._set(ServerState.STOPPED)

    async def _down(self, error: str, code: Code, *, retry: bool) -> None:
        self.error = error
        self.error_code = code
        delay = self.backoff.delay(self.attempts) if retry else None
        if retry:
            self.attempts += 1
        self.retry_delay = delay
        self.retry_at = time.monotonic() + delay if delay is not None else None
        self._broken, self._check, self._relist = "", False, False  # about the old session: no reason to hurry
        self._set(ServerState.DOWN)
        await self._sleep(delay)
        self.retry_at = None

    async def _session_once(self) -> bool:
        """Connect, serve until stopped or broken; True when the connection was up at some point."""
        resolved = resolve(self.settings, self.secrets)
        if resolved.missing:
            raise _MissingSecrets(
                f"the secret{'s' if len(resolved.missing) > 1 else ''} {', '.join(resolved.missing)} "
                "not in the keyring; enter it in Settings > MCP"
            )
        async with AsyncExitStack() as stack:
            if self.settings.transport == "stdio":
                path = self.log_dir / f"mcp-{self.name}.log" if self.log_dir is not None else None
                sink = self._stderr = StderrSink(path)
                stack.callback(sink.close_writer)
                # the SDK passes a few of our variables on (PATH, HOME...): the user's values when frozen
                env = {**child_environ(get_default_environment()), **resolved.env}
                cwd = working_dir(self.settings)
                # under the tool supervisor, so the server (and what it starts) dies with the app, kill -9 too
                lifetime.check_program(self.settings.command, path=env.get("PATH"), cwd=cwd)
                argv = lifetime.watching_parent([self.settings.command, *self.settings.args])
                params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=cwd)
                read, write = await stack.enter_async_context(stdio_client(params, errlog=sink.writer))
                sink.close_writer()  # the child has its own copy now
            else:
                auth = (
                    oauth_provider(self.name, self.settings.url, self.secrets, open_url=self.hooks.open_url)
                    if self.settings.auth == "oauth"
                    else None
                )
                self._http_status = None
                if self.settings.transport == "sse":

                    def factory(headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None) -> Any:
                        made = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
                        made.event_hooks["response"].append(self._remember_status)
                        return made

                    read, write = await stack.enter_async_context(
                        sse_client(
                            self.settings.url, headers=resolved.headers or None, auth=auth, httpx_client_factory=factory
                        )
                    )
                else:
                    client = create_mcp_http_client(headers=resolved.headers or None, auth=auth)
                    client.event_hooks["response"].append(self._remember_status)
                    await stack.enter_async_context(client)
                    read, write = await stack.enter_async_context(
                        streamable_http_client(self.settings.url, http_client=client)
                    )
            session = await stack.enter_async_context(
                ClientSession(
                    read,
                    write,
                    client_info=CLIENT_INFO,
                    message_handler=self._on_message,
                    **session_callbacks(self.name, self.hooks),
                )
            )
            # a sign-in in the browser takes a person's time, not a server's
            limit = (
                max(self.connect_timeout, SIGN_IN_TIMEOUT_S) if self.settings.auth == "oauth" else self.connect_timeout
            )
            try:
                with anyio.fail_after(limit):
                    init = await session.initialize()
                    tools = await _list_all_tools(session)
                    await self._describe_features(session, init)
            except TimeoutError:
                self.error = f"it did not finish starting within {limit:g} s"
                return False
            self.server_info = init.server_info
            self.instructions = init.instructions or ""
            self.tools = tools
            self.error = ""
            self._session = session
            self._set(ServerState.CONNECTED)
            await self._serve(session)
            self._session = None
            return True

    async def _serve(self, session: ClientSession) -> None:
        while True:
            await self._sleep(self.health_interval)
            if self._stopping or self._restart:
                return
            if self._broken:
                self.error = self._broken
                return
            self._check = False
            try:
                with anyio.fail_after(min(10.0, self.connect_timeout)):
                    if self._relist:
                        self._relist = False
                        self.tools = await _list_all_tools(session)
                        self.resources, self.templates, self.prompts = await features.list_features(
                            session, self.capabilities, self.name
                        )
                        self._notify()
                    else:
                        await session.send_ping()
            except TimeoutError:
                self.error = "it stopped answering (a ping got no reply)"
                return
            except MCPError as exc:
                self.error = "the connection closed" if exc.code == CONNECTION_CLOSED else redact(str(exc))
                return

    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr (redacted); '' for HTTP servers."""
        return redact(self._stderr.last_lines()) if self._stderr is not None else ""

    def _describe(self, exc: BaseException) -> str:
        leaf = _leaf(exc)
        if isinstance(leaf, FileNotFoundError):
            text = f"the command '{self.settings.command}' was not found; check the path or install it"
        elif isinstance(leaf, PermissionError):
            text = f"the command '{self.settings.command}' cannot be run (permission denied)"
        elif isinstance(leaf, MCPError) and leaf.code == CONNECTION_CLOSED:
            text = "it closed the connection while starting"
        elif isinstance(leaf, OSError):
            text = f"it could not be started: {leaf.strerror or leaf}"
        else:
            text = f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__
        if self.settings.transport != "stdio":
            text = _http_reason(leaf, self._http_status) or text
        tail = self.stderr_tail()
        if tail:
            text += f"; its last output: {tail}"
        log.debug("MCP server %s failed", self.name, exc_info=exc)
        return redact(text)


class _MissingSecrets(RuntimeError):
    pass


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _http_reason(exc: BaseException, status: int | None) -> str:
    name = type(exc).__name__
    if status is None:
        status = getattr(getattr(exc, "response", None), "status_code", None)
    if status in (401, 403):
        return f"the server refused the credentials (HTTP {status}); check its headers in Settings > MCP"
    if status == 404:
        return "there is no MCP endpoint at that URL (HTTP 404); check the path (often /mcp)"
    if status is not None:
        return f"the server answered HTTP {status}"
    if "Connect" in name:
        return "nothing answers at that URL (connection refused or unreachable)"
    return ""


async def _list_all_tools(session: ClientSession) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(100):  # a server that pages forever must not hang the start
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools
