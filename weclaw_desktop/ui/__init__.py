"""PySide6 front end. Only this package, ``bridges/qt*.py`` and ``app.py`` may import PySide6."""
