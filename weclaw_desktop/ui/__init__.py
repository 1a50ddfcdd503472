"""PySide6 front end. Only this package, ``bridges/qt*.py`` and the composition root ``app/`` may import PySide6."""
