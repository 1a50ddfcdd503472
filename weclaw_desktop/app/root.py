"""The composition root of the desktop app: it builds the parts and connects them, and owns nothing else.

SettingsStore -> ToolRegistry (tools.json; no tool module imported, no bridges) -> MainWindow (owns the Qt
bridge services) -> ``registry.inject(window.bridges)`` -> show. The agent runtime (which imports the
openai SDK, the slowest import of the app) is loaded right after the window is on screen, in a worker
thread, and attached to the window; a message typed before that simply waits for it. The long-lived
services (reminders, MCP servers, the phone link: :class:`~weclaw_desktop.app.services.AppServices`)
start next to it and stop when the app quits.

Everything runs on one qasync loop (:class:`WeclawEventLoop`, with asyncio's async-generator hooks).
A second launch with the same user and data folder shows the running window and exits.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from weclaw_desktop.i18n import Text, tr
from weclaw_desktop.paths import AppPaths, app_paths
from weclaw_desktop.settings import SettingsStore
from weclaw_desktop.ui.boot import build_window, follow_system_theme, prepare_ui, qt_application
from weclaw_desktop.ui.main_window import MainWindow
from weclaw_desktop.ui.qtloop import MainThreadGC, WeclawEventLoop
from weclaw_desktop.ui.single_instance import SingleInstance

if TYPE_CHECKING:
    from weclaw_desktop.agent.runtime import AgentRuntime
    from weclaw_desktop.app.services import AppServices

log = logging.getLogger("weclaw.app")

#: Set by bench/ui.py: print the wall-clock time when the window is shown, then quit.
EXIT_AFTER_SHOW_ENV = "WECLAW_EXIT_AFTER_SHOW"


def create_runtime(
    window: MainWindow,
    *,
    paths: AppPaths | None = None,
    api_key: str | None = None,
    logs: bool = True,
) -> AgentRuntime:
    """The agent runtime on the window's registry and settings, attached to the window."""
    from weclaw_desktop.agent.runtime import AgentRuntime
    from weclaw_desktop.toolkit.base import Origin

    runtime = AgentRuntime.create(
        store=window.store,
        paths=paths,
        secrets=window.secrets,
        registry=window.registry,
        origin=Origin.GUI,
        gate=window.gate,
        api_key=api_key,
        logs=logs,
    )
    window.attach_runtime(runtime)
    return runtime


#: How often the app tries the database again after a fault at start (locked by another program, full disk).
STORAGE_RETRY_S = 5.0


async def load_runtime(window: MainWindow, paths: AppPaths) -> AgentRuntime:
    """Import the agent layer off the UI thread, then compose and attach the runtime.

    A storage fault (the database locked by another program, a full or read-only disk) is shown as a
    notice and retried every few seconds; a damaged database was moved aside and a notice says where.
    """
    await asyncio.to_thread(importlib.import_module, "weclaw_desktop.agent.runtime")
    from weclaw_desktop.storage.faults import StorageError

    shown: str | None = None
    while True:
        try:
            runtime = create_runtime(window, paths=paths)
            break
        except StorageError as exc:
            log.warning("database not usable at start: %s", exc)
            if exc.kind.value != shown:
                window.show_notice(exc.text(), "error")
                shown = exc.kind.value
            await asyncio.sleep(STORAGE_RETRY_S)
    if shown is not None:
        window.show_notice(Text("storage.ok"))
    if runtime.db.recovered is not None:
        window.show_notice(runtime.db.recovered.text(), "warning")
    recovered = await runtime.recover()
    if recovered:
        log.info("marked %d interrupted turns", recovered)
    return runtime


async def load_services(
    window: MainWindow, paths: AppPaths, started: list[AppServices], after: asyncio.Future[Any] | None = None
) -> AppServices:
    """Reminders, MCP servers and the phone link (their imports take a second: off the UI thread, after the
    runtime's). The services are appended to ``started`` before they start, so quitting mid-way stops them."""
    if after is not None:
        await asyncio.wait({after})  # one import at a time; the runtime's failure is reported by its own task
    module = await asyncio.to_thread(importlib.import_module, "weclaw_desktop.app.services")
    services: AppServices = module.AppServices(window, paths)
    started.append(services)
    await services.start()
    return services


async def warm_provider(loader: asyncio.Future[AgentRuntime]) -> None:
    """Build the model client ahead of the first message, in a worker thread (the TLS trust and the http
    transport's first set-up take ~0.3 s). Not configured yet: the first request after setup builds it,
    off the UI thread as well."""
    from weclaw_desktop.agent.provider import ProviderError

    await asyncio.wait({loader})
    if loader.cancelled() or loader.exception() is not None:
        return  # reported by the loader's own task
    try:
        await loader.result().provider.ready()
    except ProviderError as exc:
        log.debug("model client not built ahead: %s", exc)


def _log_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("start-up step failed", exc_info=task.exception())


async def run(
    window: MainWindow,
    paths: AppPaths,
    single: SingleInstance | None,
    *,
    services: bool = True,
    started: list[AppServices] | None = None,
) -> int:
    """Until the user quits: load the runtime and the services, then shut everything down in order."""
    finished = asyncio.Event()
    window.quit_requested.connect(finished.set)
    loader = asyncio.ensure_future(load_runtime(window, paths))
    started = [] if started is None else started
    tasks: list[asyncio.Future[Any]] = [loader, asyncio.ensure_future(warm_provider(loader))]
    if services:
        tasks.append(asyncio.ensure_future(load_services(window, paths, started, after=loader)))
    for task in tasks:
        task.add_done_callback(_log_failure)  # when it happens, not only at quit
    await finished.wait()
    for task in tasks:
        if not task.done():
            task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await window.controller.shutdown()
    for service in started:
        await service.stop()
    unsaved = await asyncio.to_thread(window.store.flush)  # the last saves (window geometry) reach the file
    if unsaved is not None:
        log.error("settings not saved at quit: %s", unsaved)
    if single is not None:
        single.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    app = qt_application(argv)
    app.setQuitOnLastWindowClosed(False)  # the tray may keep the app alive; quitting is explicit
    paths = app_paths().ensure()
    single = SingleInstance(paths)
    if single.notify_running():
        print(tr("app.already_running"))
        return 0
    single.listen()
    store = SettingsStore.open(paths)
    prepare_ui(app, store.settings)
    loop = WeclawEventLoop(app)
    asyncio.set_event_loop(loop)
    collector = MainThreadGC()  # cyclic GC off worker threads: a QObject freed there crashes Qt timers
    collector.start()
    window = build_window(store)
    single.activated.connect(window.bring_to_front)
    follow_system_theme(app, window)
    window.show()
    if os.environ.get(EXIT_AFTER_SHOW_ENV):
        app.processEvents()
        print(f"shown {time.time():.6f}", flush=True)
        window.quit_app()
        return 0
    with loop:
        return int(loop.run_until_complete(run(window, paths, single)))
