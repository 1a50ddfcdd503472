"""A recording TCP relay on loopback between the phone (Chromium) and the desktop: what a passive observer
on the Wi-Fi sees, and (with ``tamper``) what an active one could change.

    relay = Relay("127.0.0.1", service.port); await relay.start()
    service.advertise("127.0.0.1", relay.port)     # the QR code now points at the relay
    ... the phone works ...
    relay.captured_requests()                      # every HTTP request the phone sent, raw, for replay
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Conn:
    up: bytearray = field(default_factory=bytearray)  # phone -> desktop
    down: bytearray = field(default_factory=bytearray)  # desktop -> phone


class Relay:
    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.conns: list[Conn] = []
        self.server: asyncio.Server | None = None
        self.port = 0
        #: tamper(conn, direction, data, offset) -> data: may change bytes in flight ("up" or "down")
        self.tamper: Callable[[Conn, str, bytes, int], bytes] | None = None
        self.rate = 0.0  # bytes per second downstream (0: unlimited)
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = int(self.server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
        for t in list(self._tasks):
            t.cancel()
        for t in list(self._tasks):
            with contextlib.suppress(BaseException):
                await t

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = Conn()
        self.conns.append(conn)
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, direction: str) -> None:
            buf = conn.up if direction == "up" else conn.down
            try:
                while True:
                    data = await src.read(65536)
                    if not data:
                        break
                    if self.tamper is not None:
                        data = self.tamper(conn, direction, data, len(buf))
                    buf += data
                    dst.write(data)
                    await dst.drain()
                    if direction == "down" and self.rate:
                        await asyncio.sleep(len(data) / self.rate)
            except (ConnectionError, OSError):
                pass
            finally:
                with contextlib.suppress(Exception):
                    dst.close()

        tasks = [
            asyncio.ensure_future(pipe(reader, up_writer, "up")),
            asyncio.ensure_future(pipe(up_reader, writer, "down")),
        ]
        for t in tasks:
            self._tasks.add(t)
            t.add_done_callback(self._tasks.discard)
        await asyncio.gather(*tasks, return_exceptions=True)

    # --- what was seen --------------------------------------------------------------------------
    def everything(self) -> bytes:
        return b"".join(bytes(c.up) + bytes(c.down) for c in self.conns)

    def captured_requests(self) -> list[bytes]:
        """Every request the phone sent (request line, headers and body), split by Content-Length."""
        out: list[bytes] = []
        for c in self.conns:
            data = bytes(c.up)
            while data:
                end = data.find(b"\r\n\r\n")
                if end < 0:
                    break
                head = data[: end + 4]
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                out.append(data[: end + 4 + length])
                data = data[end + 4 + length :]
        return out


def request_target(raw: bytes) -> tuple[str, str]:
    line = raw.split(b"\r\n", 1)[0].decode()
    method, path, _ = line.split(" ", 2)
    return method, path


async def replay(host: str, port: int, raw: bytes) -> int:
    """Send a captured request again on a new connection; its status code."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(raw)
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), 10)
        return int(line.split(b" ")[1])
    finally:
        writer.close()
