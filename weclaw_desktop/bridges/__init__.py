"""Bridge services: capabilities the front end owns (Qt clipboard, tray, screens, the phone link).

Tools depend on the protocols in :mod:`weclaw_desktop.bridges.protocols`; the Qt implementations live in
``bridges/qt*.py`` (the only place besides ``ui/`` and the composition root ``app/`` that imports PySide6). The registry
gets them through ``ToolRegistry.inject`` after the window exists.
"""

from weclaw_desktop.bridges.protocols import KNOWN_BRIDGES

__all__ = ["KNOWN_BRIDGES"]
