"""The agent runtime: everything below the front end, composed once and shared by ``weclaw chat`` and the GUI.

:meth:`AgentRuntime.create` builds, from :class:`Settings` and the :class:`SecretStore`:

- the :class:`ToolRegistry` (tools.json + ``settings.tools.config`` overrides), with the ``history``
  bridge (for the chat_history tool) and the ``tool_index`` bridge (for tool_search) injected;
- the :class:`Dispatcher` with the SQLite audit sink, the Policy and ApprovalPolicy from settings, and
  :attr:`AgentRuntime.hooks` (public: plugins and the MCP bridge add before/after hooks there); its
  ``exposure`` (the one computation of what can be offered) also gives tool_search its visible set;
- the :class:`ToolEnv` every tool call gets: the data and outputs folders, the allowed roots and the one
  shared ``weclaw.db`` (:attr:`AgentRuntime.db`);
- the exposer (``intent.factory.make_exposer``), the :class:`HistoryStore`, the :class:`Provider`;
- the :class:`AgentLoop` that runs turns.

Front ends use only this API (UI-agnostic, no Qt)::

    rt = AgentRuntime.create(store=store)              # follows the SettingsStore; or create(settings) (fixed)
    await rt.recover()                                  # once at start-up: turns a crash left 'running'
    s = await rt.create_session()
    handle = rt.start_turn(s.id, "你好", on_event=print)  # returns at once; the turn runs as a Task
    async for event in handle.events(): ...            # or just the callback
    handle.cancel()                                     # Stop
    done = await handle.wait()                          # the TurnDone, also after Stop
    await rt.list_sessions(); await rt.rename_session(s.id, "x"); await rt.search("发票")
    await rt.load_messages(s.id)                        # for display
    rt.apply_settings(new_settings)                     # done by the store subscription when it has one
    rt.set_api_key("sk-..."); await rt.list_models(); await rt.check_endpoint()   # settings dialog
    rt.hooks.add_before(...); rt.registry.inject({"clipboard": ...})
    # the approval gate is given once, to create(gate=...) by the composition root; start_turn(gate=...)
    # overrides it for one turn
    await rt.close()

One turn per session at a time (:class:`TurnInProgress` otherwise); different sessions may run at once.
Events are the dataclasses of ``agent/events.py``; dispatch on their type or ``event.event_name()``
(not ``event.kind``: on ErrorOccurred that field is the error category).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from weclaw_desktop.agent import events as ev
from weclaw_desktop.agent.audit_sink import SqliteAudit
from weclaw_desktop.agent.history import HistoryStore, SearchHit, SessionInfo, StoredMessage, StoredToolCall
from weclaw_desktop.agent.history_branches import BranchKind
from weclaw_desktop.agent.logs import setup_logging
from weclaw_desktop.agent.loop import AgentLoop, LoopOptions
from weclaw_desktop.agent.provenance import ProvenanceStore
from weclaw_desktop.agent.provider import Provider, ProviderConfig
from weclaw_desktop.agent.runtime_chats import ChatFeatures, TitleListener
from weclaw_desktop.agent.turn_plan import TurnPlan
from weclaw_desktop.attachments import Attachment
from weclaw_desktop.intent.factory import make_exposer, make_tool_index
from weclaw_desktop.paths import AppPaths, app_paths
from weclaw_desktop.secrets import SecretStore, take_env_secrets
from weclaw_desktop.settings import SECTIONS, ProviderSettings, Settings, SettingsChange, SettingsStore
from weclaw_desktop.storage.db import Database
from weclaw_desktop.toolkit.approval import AllowRule, ApprovalGate
from weclaw_desktop.toolkit.availability import AvailabilityContext
from weclaw_desktop.toolkit.base import Origin, ToolEnv
from weclaw_desktop.toolkit.dispatcher import Dispatcher
from weclaw_desktop.toolkit.hooks import Hooks
from weclaw_desktop.toolkit.pathclass import Places
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.tools._db import shared_database

log = logging.getLogger("weclaw.runtime")

EventCallback = Callable[[ev.Event], None]
_END = object()


class TurnInProgress(RuntimeError):
    """A turn is already running in this session; wait for it or stop it first."""


@dataclass
class TurnHandle:
    """A running turn: its task, its events, and Stop."""

    run_id: str
    session_id: str
    task: asyncio.Task[ev.TurnDone] = field(init=False)
    done_event: ev.TurnDone | None = None
    _queue: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)
    _callbacks: list[EventCallback] = field(default_factory=list)

    def _deliver(self, event: ev.Event) -> None:
        if isinstance(event, ev.TurnDone):
            self.done_event = event
        for callback in list(self._callbacks):
            try:
                callback(event)
            except Exception:
                log.exception("turn event callback failed")
        self._queue.put_nowait(event)
        if isinstance(event, ev.TurnDone):
            self._queue.put_nowait(_END)

    async def events(self) -> AsyncIterator[ev.Event]:
        """Every event of the turn, ending after TurnDone. Iterate once."""
        while True:
            item = await self._queue.get()
            if item is _END:
                return
            yield item

    def cancel(self) -> bool:
        """Stop the turn (closes the stream, cancels running tools). False if it already ended."""
        return self.task.cancel()

    @property
    def running(self) -> bool:
        return not self.task.done()

    async def wait(self) -> ev.TurnDone:
        """The TurnDone of the turn, also when it was stopped or failed unexpectedly."""
        await asyncio.wait({self.task})
        if self.done_event is not None:
            return self.done_event
        if self.task.cancelled():
            return ev.TurnDone(
                run_id=self.run_id, session_id=self.session_id, reason="cancelled", message="Stopped by the user."
            )
        exc = self.task.exception()
        message = f"Internal error: {type(exc).__name__}: {exc}" if exc else "The turn ended without an answer."
        return ev.TurnDone(run_id=self.run_id, session_id=self.session_id, reason="error", message=message)


class AgentRuntime(ChatFeatures):
    def __init__(
        self,
        *,
        settings: Settings,
        paths: AppPaths,
        secrets: SecretStore,
        db: Database,
        registry: ToolRegistry,
        dispatcher: Dispatcher,
        history: HistoryStore,
        audit: SqliteAudit,
        loop: AgentLoop,
        hooks: Hooks,
        origin: Origin,
        env_keys: Mapping[str, str],
        gate: ApprovalGate | None = None,
        api_key_override: str | None = None,
    ) -> None:
        self.settings = settings
        self.paths = paths
        self.secrets = secrets
        self.db = db
        self.registry = registry
        self.dispatcher = dispatcher
        self.history = history
        self.audit = audit
        self.loop = loop
        self.hooks = hooks
        self.origin = origin
        #: Asks the user about calls that need approval, for turns started without their own gate. Given once
        #: by the composition root (``create(gate=...)``); None: such calls are denied (no one to ask).
        self.gate = gate
        self._env_keys = dict(env_keys)
        self._api_key_override = api_key_override
        self._turns: dict[str, TurnHandle] = {}  # session id -> running turn
        self._retired: list[Provider] = []  # replaced by apply_settings; closed in close()
        self._providers: dict[tuple[str, str], Provider] = {}  # (configuration, model) -> provider (runtime_chats)
        self._side_tasks: set[asyncio.Task[Any]] = set()  # title requests
        #: Called with (session id, title) when a chat got its title from the first exchange.
        self.title_listeners: list[TitleListener] = []
        self._unsubscribe: Callable[[], None] = lambda: None
        self._store: SettingsStore | None = None

    # --- construction ---------------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        settings: Settings | None = None,
        *,
        store: SettingsStore | None = None,
        paths: AppPaths | None = None,
        secrets: SecretStore | None = None,
        registry: ToolRegistry | None = None,
        tools_json: str | Path | None = None,
        origin: Origin = Origin.GUI,
        gate: ApprovalGate | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        bridges: Mapping[str, Any] | None = None,
        logs: bool = True,
    ) -> AgentRuntime:
        """Compose the runtime. ``api_key`` overrides keyring and environment (tests, ``--api-key-env``).

        With ``store`` the runtime uses its settings and follows every save (provider, dispatcher policy and
        approval policy, tool config overrides, exposer, loop options); with ``settings`` alone they are
        fixed (``weclaw chat`` with its command-line overrides). Neither: the settings file, read once."""
        paths = (paths or (store.paths if store is not None else None) or app_paths()).ensure()
        if settings is None:
            settings = store.settings if store is not None else SettingsStore(paths).settings
        secrets = secrets or SecretStore()
        if logs:
            setup_logging(paths.logs)
        env_keys = take_env_secrets((api_key_env,) if api_key_env else ())
        if api_key_env and api_key is None:
            api_key = env_keys.get(api_key_env)
        if registry is None:
            registry = ToolRegistry.from_path(tools_json, config_overrides=settings.tools.config)
        db = shared_database(paths.database)  # the one Database object of this file: tools, scheduler, history
        history = HistoryStore(db)
        audit = SqliteAudit(db)
        history.on_abandoned(audit.close_runs)  # recovery closes the audit rows of interrupted turns too
        hooks = Hooks()
        dispatcher = Dispatcher(
            registry,
            policy=settings.tools.policy,
            approval_policy=settings.agent.approvals,
            hooks=hooks,
            audit=audit,
            availability=lambda: AvailabilityContext(has_secret=secrets.has),
            places=_places(settings, paths),
        )
        # tool_search names only tools the exposure computation says can be offered now (not hidden or
        # switched-off ones); the dispatcher's policy is read at call time, so a Settings change applies at once.
        index = make_tool_index(registry, visible=lambda: dispatcher.exposure.compute().visible)
        injected: dict[str, Any] = {"history": history, "tool_index": index}
        injected.update(bridges or {})
        registry.inject(injected)
        loop = AgentLoop(
            provider=Provider(ProviderConfig(base_url="", model="")),
            dispatcher=dispatcher,
            exposer=make_exposer(registry, settings.agent.exposure),
            history=history,
            tool_env=_tool_env(settings, paths, db),
            options=_options(settings),
            provenance_store=ProvenanceStore(db),
        )
        runtime = cls(
            settings=settings,
            paths=paths,
            secrets=secrets,
            db=db,
            registry=registry,
            dispatcher=dispatcher,
            history=history,
            audit=audit,
            loop=loop,
            hooks=hooks,
            origin=origin,
            env_keys=env_keys,
            gate=gate,
            api_key_override=api_key,
        )
        loop.provider = Provider(runtime.provider_config())
        dispatcher.remember_rule = runtime.remember_rule
        dispatcher.safety.resolvers["device"] = runtime._device_name
        runtime._store = store
        if store is not None:
            runtime._unsubscribe = store.subscribe(runtime._settings_changed, SECTIONS)
        return runtime

    async def _device_name(self, wanted: str) -> str:
        """For approval summaries: the paired phone a send would go to ("Pixel 7")."""
        bridge = self.registry.bridge("companion")
        if bridge is None:
            return wanted
        devices = await bridge.list_devices()
        if wanted:
            key = wanted.strip().casefold()
            match = [d for d in devices if d.id == wanted.strip() or key in d.name.casefold()]
            return match[0].name if len(match) == 1 else wanted
        online = [d for d in devices if d.online]
        return max(online or devices, key=lambda d: d.last_seen).name if devices else wanted

    def remember_rule(self, rule: AllowRule) -> None:
        """Keep an "always allow" the user chose at the gate: saved through the settings store (the GUI's,
        whose subscription then puts it in use; for ``weclaw chat`` a store on the same file, so only this
        change is written, not the command line's overrides) and in use now."""
        self.dispatcher.approval_policy = self.dispatcher.approval_policy.with_rule(rule)
        if self._store is None:
            self.settings.agent.approvals = self.settings.agent.approvals.with_rule(rule)  # our own copy

        def add(settings: Settings) -> None:
            settings.agent.approvals = settings.agent.approvals.with_rule(rule)

        try:
            (self._store or SettingsStore.open(self.paths)).update(add)
        except (OSError, ValueError):
            log.exception("could not save the 'always allow' rule for %s", rule.function or rule.tool)

    def set_api_key(self, key: str, entry: ProviderSettings | None = None) -> bool:
        """Store a configuration's key (keyring) and use it from now on; False = kept for this run only."""
        persistent = self.secrets.set((entry or self.settings.provider).api_key_name, key)
        self._api_key_override = None if persistent else key
        self.apply_settings(self.settings, {"providers"})
        return persistent

    async def list_models(self, config: ProviderConfig | None = None) -> list[str]:
        """Models of ``config``'s endpoint (default: the current one). Raises ProviderError."""
        provider = Provider(config or self.provider_config())
        try:
            return await provider.list_models()
        finally:
            await provider.close()

    async def check_endpoint(self, config: ProviderConfig | None = None) -> str:
        """Whether the endpoint answers and accepts the key (one line), or ProviderError."""
        provider = Provider(config or self.provider_config())
        try:
            return await provider.check()
        finally:
            await provider.close()

    @property
    def provider(self) -> Provider:
        return self.loop.provider

    def _settings_changed(self, change: SettingsChange) -> None:
        self.apply_settings(change.settings, change.sections)

    def apply_settings(self, settings: Settings, sections: Iterable[str] | None = None) -> None:
        """Use new settings from now on (running turns keep the provider they started with).

        ``sections``: what changed (default: everything); the provider is rebuilt only when it did."""
        changed = set(SECTIONS if sections is None else sections)
        self.settings = settings
        if "tools" in changed:
            self.dispatcher.policy = settings.tools.policy
            for tool, values in settings.tools.config.items():
                if tool in self.registry.tool_names(include_disabled=True) and self.registry.effective_config(tool) != {
                    **self.registry.spec(tool).config,
                    **values,
                }:
                    self.registry.set_config_overrides(tool, values)
            self.loop.tool_env = _tool_env(settings, self.paths, self.db)
        if "agent" in changed:
            self.dispatcher.approval_policy = settings.agent.approvals
        if changed & {"companion", "tools"}:
            self.dispatcher.safety.set_places(_places(settings, self.paths))
            self.loop.exposer = make_exposer(self.registry, settings.agent.exposure)
        if changed & {"agent", "ui"}:
            self.loop.options = _options(settings)
        if "providers" in changed:
            old = self.loop.provider
            self.loop.provider = Provider(self.provider_config())
            self._retired.append(old)
            self._retire_providers()

    # --- turns ------------------------------------------------------------------------------------------
    def start_turn(
        self,
        session_id: str,
        text: str,
        *,
        on_event: EventCallback | None = None,
        gate: ApprovalGate | None = None,
        origin: Origin | None = None,
        parent: str | None = None,
        kind: BranchKind = "new",
        attachments: Sequence[Attachment] = (),
        plan: TurnPlan | None = None,
        pasted: bool = False,
    ) -> TurnHandle:
        """Start a turn as an asyncio Task and return at once. Must be called on the event loop.

        ``gate`` asks about this turn's calls instead of the runtime's :attr:`gate`. The chat's provider,
        model and assistant answer it (``plan`` overrides them: tests); ``parent``/``kind`` place it in the
        conversation tree (default: after the last turn of the active branch; see :meth:`edit`,
        :meth:`regenerate`); ``attachments`` are sent with the message (check images first with
        :meth:`check_attachments`). ``pasted``: the text holds something the user pasted (it counts as
        untrusted content for the rest of the chat)."""
        running = self._turns.get(session_id)
        if running is not None and running.running:
            raise TurnInProgress("A reply is still being written in this conversation; stop it or wait.")
        handle = TurnHandle(run_id=uuid.uuid4().hex[:12], session_id=session_id)
        if on_event is not None:
            handle._callbacks.append(on_event)

        async def run() -> ev.TurnDone:
            chosen = plan or await self.plan_turn(session_id, parent=parent, kind=kind, attachments=attachments)
            if plan is not None and (parent is not None or kind != "new" or attachments):
                chosen = replace(plan, parent=parent, kind=kind, attachments=tuple(attachments))
            return await self.loop.run_turn(
                session_id,
                text,
                emit=handle._deliver,
                run_id=handle.run_id,
                origin=origin or self.origin,
                gate=gate if gate is not None else self.gate,
                plan=chosen,
                pasted=pasted,
            )

        coro = run()
        handle.task = asyncio.get_running_loop().create_task(coro, name=f"turn-{handle.run_id}")
        self._turns[session_id] = handle
        handle.task.add_done_callback(lambda _t: self._turn_ended(handle))
        return handle

    def _turn_ended(self, handle: TurnHandle) -> None:
        if self._turns.get(handle.session_id) is handle:
            del self._turns[handle.session_id]
        if handle.done_event is not None:
            self.after_turn(handle.session_id, handle.done_event.reason)
        if handle.done_event is None:  # ended without TurnDone (a bug or an early failure)
            task = handle.task
            if not task.cancelled() and task.exception() is not None:
                log.error("turn %s ended with %r", handle.run_id, task.exception())
            handle._queue.put_nowait(_END)

    def running_turn(self, session_id: str) -> TurnHandle | None:
        return self._turns.get(session_id)

    def cancel(self, session_id: str) -> bool:
        """Stop the running turn of a session; False when none runs."""
        handle = self._turns.get(session_id)
        return handle.cancel() if handle is not None else False

    # --- sessions -----------------------------------------------------------------------------------------
    async def create_session(self, title: str = "", *, assistant: str = "") -> SessionInfo:
        """A new chat, started from ``assistant`` (default: the default assistant) with its model."""
        _entry, model, _a = await self.who_answers("")
        info = await self.history.create_session(title, model=model, origin=self.origin.value)
        await self.start_chat(info, assistant)
        if title:
            await self.history.chats.set_title(info.id, title, "user")
        return info

    async def list_sessions(self, limit: int = 200) -> list[SessionInfo]:
        return await self.history.list_sessions(limit)

    async def get_session(self, session_id: str) -> SessionInfo | None:
        return await self.history.get_session(session_id)

    async def rename_session(self, session_id: str, title: str) -> bool:
        return await self.rename_chat(session_id, title)

    async def delete_session(self, session_id: str) -> bool:
        """Delete a conversation (its running turn is stopped first); its audit rows are kept."""
        handle = self._turns.get(session_id)
        if handle is not None:
            handle.cancel()
            await handle.wait()
        return await self.history.delete_session(session_id)

    async def search(self, query: str, limit: int = 20) -> list[SearchHit]:
        return await self.history.search(query, limit)

    async def load_messages(self, session_id: str) -> list[StoredMessage]:
        """The stored messages of a session in order (user, assistant, tool), for display."""
        return await self.history.messages(session_id)

    async def tool_calls(self, session_id: str) -> list[StoredToolCall]:
        return await self.history.tool_calls(session_id)

    async def recover(self) -> int:
        """Mark turns left running by a process that died as interrupted (call once at start-up)."""
        return await self.history.mark_abandoned_turns()

    async def close(self) -> None:
        self._unsubscribe()
        for handle in list(self._turns.values()):
            handle.cancel()
            await handle.wait()
        for task in list(self._side_tasks):
            task.cancel()
        if self._side_tasks:
            await asyncio.gather(*self._side_tasks, return_exceptions=True)
        self._retire_providers()
        for provider in [*self._retired, self.loop.provider]:
            await provider.close()
        self._retired.clear()
        self.db.close()


def _options(settings: Settings) -> LoopOptions:
    a = settings.agent
    return LoopOptions(
        max_rounds=a.max_rounds,
        result_cap=a.result_cap_chars,
        turn_result_budget=a.turn_result_budget_chars,
        loop_guard_repeats=a.loop_guard_repeats,
        circuit_failures=a.circuit_breaker_failures,
        language=settings.ui.language,
    )


def _places(settings: Settings, paths: AppPaths) -> Places:
    """The app's folders for tools.json's path classes ({incoming}, {outputs}, {data}...)."""
    incoming = Path(settings.companion.incoming_dir).expanduser() if settings.companion.incoming_dir else None
    return Places.default(paths, incoming=incoming, outputs=settings.outputs_dir(paths))


def _tool_env(settings: Settings, paths: AppPaths, db: Database) -> ToolEnv:
    """Where tools work, from the settings and the paths: injected into every ToolContext of a turn."""
    outputs = settings.outputs_dir(paths)
    with contextlib.suppress(OSError):
        outputs.mkdir(parents=True, exist_ok=True)
    roots = tuple(Path(r).expanduser() for r in settings.tools.allowed_roots)
    return ToolEnv(outputs_dir=outputs, data_dir=paths.data, db=db, allowed_roots=roots)
