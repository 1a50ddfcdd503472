"""The desktop app's composition root (the top of the layers; see ``tests/test_architecture.py``).

- :mod:`.root`: ``main()`` -- settings -> registry -> window (``ui.boot``) -> runtime -> services -> run;
- :mod:`.services`: the long-lived services (reminders, MCP servers, the phone link) plugged into the
  window: the only place where the companion, the MCP manager and the scheduler meet the UI.

Both may import from every layer below, including ``ui/`` and PySide6; nothing below imports them.
"""

from weclaw_desktop.app.root import EXIT_AFTER_SHOW_ENV, create_runtime, load_runtime, load_services, main, run

__all__ = ["EXIT_AFTER_SHOW_ENV", "create_runtime", "load_runtime", "load_services", "main", "run"]
