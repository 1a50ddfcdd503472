"""The Qt side of the translation system (:mod:`weclaw_desktop.i18n`): live language switching.

    install_translations(app)      # once, at start: follow weclaw_desktop.i18n's language from now on
    set_ui_language("zh")          # any time: every open window and dialog retranslates, no restart

On a change of the active language this swaps Qt's own catalogue (``qtbase_<lang>.qm``: the buttons of
``QMessageBox``, the file picker, the line edits' context menus) and makes Qt deliver ``LanguageChange`` to
every top-level widget, which passes it to its children. Widgets with text override ``changeEvent`` and
call their ``retranslate()``; the text they set at construction comes from that same method, so nothing
can be translated only once. Text that is data (a chat message, a file name) is never translated.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, QLibraryInfo, QLocale, QTranslator
from PySide6.QtWidgets import QMessageBox, QWidget

from weclaw_desktop import i18n

log = logging.getLogger("weclaw.ui")

#: UI language -> the Qt catalogue that translates Qt's own widgets (None: Qt's built-in English).
QT_CATALOGUES: dict[str, str | None] = {"en": None, "zh": "qtbase_zh_CN"}


def system_ui_languages() -> list[str]:
    """The user's preferred UI languages as the OS tells Qt (best first)."""
    return list(QLocale.system().uiLanguages())


def resolve(setting: str) -> str:
    """The UI language for a settings value (``system`` follows the OS's preferred languages)."""
    return i18n.resolve_language(setting, system_ui_languages())


def translations_dirs() -> list[Path]:
    """Where Qt's .qm files are: Qt's own location, then the PySide6 package (the bundle keeps them
    there, under ``PySide6/Qt/translations``)."""
    dirs = [Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath))]
    try:
        import PySide6

        dirs.append(Path(PySide6.__file__).resolve().parent / "Qt" / "translations")
    except (ImportError, TypeError):  # pragma: no cover - PySide6 is imported above
        pass
    return dirs


class _QtTranslations:
    """The installed Qt catalogue, swapped on every language change."""

    def __init__(self) -> None:
        self.translator: QTranslator | None = None
        self.loaded: str | None = None  # the .qm in use (tests and the self-test read it)
        self._unsubscribe = None

    def load(self, lang: str) -> QTranslator | None:
        name = QT_CATALOGUES.get(lang)
        if name is None:
            return None
        for folder in translations_dirs():
            translator = QTranslator()
            if translator.load(name, str(folder)):
                return translator
        log.warning("Qt's %s translations (%s.qm) were not found in %s", lang, name, translations_dirs())
        return None

    def apply(self, lang: str) -> None:
        app = QCoreApplication.instance()
        if app is None:
            return
        changed = False
        if self.translator is not None:
            changed = QCoreApplication.removeTranslator(self.translator)
            self.translator = None
            self.loaded = None
        translator = self.load(lang)
        if translator is not None and QCoreApplication.installTranslator(translator):
            self.translator = translator
            self.loaded = QT_CATALOGUES[lang]
            changed = True
        if not changed:  # no Qt catalogue swapped (e.g. none for this language): Qt sent no LanguageChange
            QCoreApplication.sendEvent(app, QEvent(QEvent.Type.LanguageChange))


_qt = _QtTranslations()


def install_translations(app: QCoreApplication) -> None:
    """Load Qt's catalogue for the active language, and follow every later change of it."""
    _qt.apply(i18n.language())
    if _qt._unsubscribe is None:
        _qt._unsubscribe = i18n.subscribe(_qt.apply)  # type: ignore[assignment]


def set_ui_language(lang: str) -> bool:
    """Switch the UI language live; True if it changed. Open windows retranslate when the event loop runs."""
    return i18n.set_language(lang)


def qt_catalogue() -> str | None:
    """The name of Qt's own catalogue in use (None: Qt's built-in English)."""
    return _qt.loaded


def is_language_change(event: QEvent) -> bool:
    return event.type() == QEvent.Type.LanguageChange


class MessageBox(QMessageBox):
    """A ``QMessageBox`` whose title and text are :class:`~weclaw_desktop.i18n.Text` values: they follow a
    language change while the box is open (Qt translates its standard buttons itself)."""

    def __init__(self, icon: QMessageBox.Icon, title: i18n.Text, text: i18n.Text, parent: QWidget | None = None):
        super().__init__(parent)
        self.setIcon(icon)
        self._title = title
        self._text = text
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(str(self._title))
        self.setText(str(self._text))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)


#: Dynamic property of widgets whose text is data, not UI text (a chat message, a tool's output, a file
#: name): it is never translated, and the untranslated-text test skips it.
CONTENT_PROPERTY = "weclawContent"


def mark_content(widget: QWidget) -> QWidget:
    widget.setProperty(CONTENT_PROPERTY, True)
    return widget
