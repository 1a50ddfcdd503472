"""One WeClaw per user and data folder: a second launch asks the first to show its window, then exits.

The first instance listens on a ``QLocalServer`` whose name is derived from the user and the data
folder (so a test with its own ``WECLAW_HOME`` never meets the user's real instance). A stale socket
left by a crash is removed when nothing answers on it.
"""

from __future__ import annotations

import getpass
import hashlib

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from weclaw_desktop.paths import AppPaths

MESSAGE = b"activate\n"


def server_name(paths: AppPaths) -> str:
    try:
        user = getpass.getuser()
    except Exception:  # no user name in the environment (some containers)
        user = "user"
    digest = hashlib.sha256(f"{user}\0{paths.data}".encode()).hexdigest()[:16]
    return f"weclaw-desktop-{digest}"


class SingleInstance(QObject):
    activated = Signal()

    def __init__(self, paths: AppPaths, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = server_name(paths)
        self.server: QLocalServer | None = None

    def notify_running(self, timeout_ms: int = 500) -> bool:
        """True when another instance answered (it was asked to show its window)."""
        socket = QLocalSocket()
        socket.connectToServer(self.name)
        if not socket.waitForConnected(timeout_ms):
            return False
        socket.write(MESSAGE)
        socket.flush()
        socket.waitForBytesWritten(timeout_ms)
        socket.disconnectFromServer()
        return True

    def listen(self) -> bool:
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not server.listen(self.name):
            QLocalServer.removeServer(self.name)  # stale socket from a crashed run
            if not server.listen(self.name):
                return False
        server.newConnection.connect(self._incoming)
        self.server = server
        return True

    def _incoming(self) -> None:
        assert self.server is not None
        while self.server.hasPendingConnections():
            socket = self.server.nextPendingConnection()
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(socket.deleteLater)
            if socket.bytesAvailable():
                self._read(socket)

    def _read(self, socket: QLocalSocket) -> None:
        if bytes(socket.readAll().data()).startswith(MESSAGE.strip()):
            self.activated.emit()

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None
