"""CompanionService: the ``companion`` bridge. The phone link's rules (:mod:`.service`) served over HTTP
(:mod:`.server`) on the app's asyncio loop.

    service = CompanionService(settings.companion)
    service.events.subscribe(on_event)            # file received, ready/delivered, device paired/revoked ...
    service.accept_device = ask_user              # async (PairingRequest) -> bool; or settings.auto_accept
    await service.start()                         # bind the chosen interface and port
    code = service.new_pairing_code()             # QR: code.url (the secret is in the URL fragment)
    transfer = await service.send_files([path], device_id=...)
    await transfer.wait(120)                      # delivered = the phone holds it and its save started
    await service.stop()

The object lives as long as the app; start() and stop() may be called any number of times (the app injects
it into the registry while it runs, and again after a restart on another port).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from weclaw_desktop.companion.events import CompanionEvent, EventKind
from weclaw_desktop.companion.network import choose_address
from weclaw_desktop.companion.pairing import PairingCode
from weclaw_desktop.companion.server import HttpServer
from weclaw_desktop.companion.service import CompanionCore

log = logging.getLogger("weclaw.companion")


class CompanionService(CompanionCore):
    _http: HttpServer | None = None

    @property
    def running(self) -> bool:
        return self._http is not None

    async def start(self, host: str | None = None, port: int | None = None) -> None:
        """Bind ``host`` (default: the chosen interface, else the default-route LAN address) and ``port``."""
        if self.running:
            await self.stop()
        await self.open()
        address = host if host else await asyncio.to_thread(choose_address, self.settings.interface)
        wanted = self.settings.port if port is None else port
        http = HttpServer(self)
        bound = await http.start(address, wanted)
        self.advertise(address, bound)
        self._http = http
        log.info("phone link listening on %s", self.base_url)
        self.events.emit(CompanionEvent(EventKind.SERVER_STARTED, data={"url": self.base_url}))

    async def stop(self) -> None:
        http, self._http = self._http, None
        if http is None:
            return
        self.close()
        await http.stop()
        self.advertise("", 0)
        log.info("phone link stopped")
        self.events.emit(CompanionEvent(EventKind.SERVER_STOPPED))

    def new_pairing_code(self) -> PairingCode:
        if not self.running:
            raise RuntimeError("the phone link is off; start it before pairing")
        return super().new_pairing_code()


def attach_to_registry(service: CompanionService, inject: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
    """Keep the ``companion`` bridge injected while the server runs (``inject`` = ``registry.inject``)."""

    def on_event(event: CompanionEvent) -> None:
        if event.kind is EventKind.SERVER_STARTED:
            inject({"companion": service})
        elif event.kind is EventKind.SERVER_STOPPED:
            inject({"companion": None})

    if service.running:
        inject({"companion": service})
    return service.events.subscribe(on_event)
