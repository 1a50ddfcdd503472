"""Settings > Tools: generated from each tool's ``Config`` model and its keyring entries.

No tool has UI code here: for every tool in tools.json whose class has a ``Config`` with fields, or that
uses keyring entries (``secrets`` in tools.json, or a ``{"secret": ...}`` in its ``requires``), the page
makes a section with one editor per field, chosen by the field's type:

    bool -> check box · int -> spin box (ge/le) · float -> decimal spin box · Literal -> combo box ·
    list[str] -> one item per line · str and anything else -> line edit

Labels are the catalogue's ``toolcfg.<tool>.<field>`` when present, else the field name made readable; the
field's ``description`` is the hint under it. Keyring entries are password fields with Show/Hide; saving
stores them in the keyring (or for this session only, said on the field, when there is no keyring). Values
equal to tools.json's are not saved (the user's overrides stay minimal). Invalid values are refused by the
tool's own model with its message, and nothing is saved. The page also edits the tool deny list.

Sections exist before the tool modules are imported (the section headers come from tools.json); the editors
are made when the page is first shown, so opening Settings imports no tool module.
"""

from __future__ import annotations

import logging
import types
import typing
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QAction, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.i18n import has, is_chinese, language, pick, tr
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import Settings
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.ui import icons
from weclaw_desktop.ui.translation import mark_content

log = logging.getLogger("weclaw.ui")

#: Fields shown as passwords even when they live in the Config (never: secrets belong in the keyring).
SECRET_WORDS = ("password", "api_key", "token", "secret")
INT_RANGE = (-(2**31), 2**31 - 1)


UNITS = {"_s": " (s)", "_ms": " (ms)", "_mb": " (MB)", "_kb": " (KB)"}


def readable(name: str) -> str:
    """A field name as a label: "max_timeout_s" -> "Max timeout (s)"."""
    unit = ""
    for suffix, shown in UNITS.items():
        if name.endswith(suffix):
            name, unit = name[: -len(suffix)], shown
            break
    words = name.replace("_", " ").strip()
    return words[:1].upper() + words[1:] + unit


def _bounds(info: FieldInfo) -> tuple[float | None, float | None]:
    lo = hi = None
    for meta in info.metadata:
        for attr, is_lo in (("ge", True), ("gt", True), ("le", False), ("lt", False)):
            value = getattr(meta, attr, None)
            if value is None:
                continue
            if is_lo:
                lo = float(value)
            else:
                hi = float(value)
    return lo, hi


def _literal_values(annotation: Any) -> list[Any] | None:
    if typing.get_origin(annotation) is typing.Literal:
        return list(typing.get_args(annotation))
    return None


def _is_str_list(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (list, tuple) and typing.get_args(annotation)[:1] == (str,)


def _strip_optional(annotation: Any) -> Any:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


class FieldEditor:
    """One field: a widget, how to show a value, how to read it back."""

    def __init__(self, widget: QWidget, get: Callable[[], Any], put: Callable[[Any], None]) -> None:
        self.widget = widget
        self.get = get
        self.put = put


def editor_for(info: FieldInfo) -> FieldEditor:
    """The editor a field's type calls for (see the module docstring)."""
    annotation = _strip_optional(info.annotation)
    choices = _literal_values(annotation)
    if annotation is bool:
        box = QCheckBox()
        return FieldEditor(box, box.isChecked, lambda v: box.setChecked(bool(v)))
    if choices is not None:
        combo = QComboBox()
        mark_content(combo)  # the values are the model's own identifiers ("starttls", "tls")
        for value in choices:
            combo.addItem(str(value), value)
        return FieldEditor(combo, combo.currentData, lambda v: combo.setCurrentIndex(max(0, combo.findData(v))))
    if annotation is int:
        lo, hi = _bounds(info)
        default = info.default if isinstance(info.default, int) else 0
        fits = all(INT_RANGE[0] <= x <= INT_RANGE[1] for x in (lo or 0, hi or 0, default))
        if fits:
            spin = QSpinBox()
            spin.setRange(int(lo if lo is not None else INT_RANGE[0]), int(hi if hi is not None else INT_RANGE[1]))
            return FieldEditor(spin, spin.value, lambda v: spin.setValue(int(v)))
        big = QLineEdit()  # beyond a spin box's range (byte counts): typed, checked by the tool's model

        def number() -> Any:
            text = big.text().strip().replace(",", "").replace("_", "")
            try:
                return int(text)
            except ValueError:
                return text  # the model refuses it with its own message

        return FieldEditor(big, number, lambda v: big.setText(str(v)))
    if annotation is float:
        dspin = QDoubleSpinBox()
        lo, hi = _bounds(info)
        dspin.setDecimals(2)
        dspin.setRange(lo if lo is not None else 0.0, hi if hi is not None else 1e9)
        return FieldEditor(dspin, dspin.value, lambda v: dspin.setValue(float(v)))
    if _is_str_list(annotation):
        lines = QPlainTextEdit()
        lines.setFixedHeight(72)
        return FieldEditor(
            lines,
            lambda: [line.strip() for line in lines.toPlainText().splitlines() if line.strip()],
            lambda v: lines.setPlainText("\n".join(str(x) for x in (v or []))),
        )
    line = QLineEdit()
    return FieldEditor(line, line.text, lambda v: line.setText("" if v is None else str(v)))


def add_reveal(edit: QLineEdit) -> QAction:
    """A Show/Hide eye at the end of a password field (its tooltip in the UI language, set by the caller's
    retranslate through :func:`reveal_text`)."""
    action = QAction(edit)
    action.setCheckable(True)
    icons.bind(action, "search")

    def toggled(shown: bool) -> None:
        edit.setEchoMode(QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password)
        action.setToolTip(reveal_text(shown))

    action.toggled.connect(toggled)
    action.setToolTip(reveal_text(False))
    edit.addAction(action, QLineEdit.ActionPosition.TrailingPosition)
    return action


def reveal_text(shown: bool) -> str:
    return tr("settings.secret.hide") if shown else tr("settings.secret.show")


class SecretField(QWidget):
    """A password field with Show/Hide, and what happens to the value (keyring or this session only)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)
        self.edit = QLineEdit()
        self.edit.setEchoMode(QLineEdit.EchoMode.Password)
        row.addWidget(self.edit, 1)
        self.toggle = QToolButton()
        self.toggle.setCheckable(True)
        self.toggle.toggled.connect(self._shown)
        row.addWidget(self.toggle)
        self.retranslate()

    def _shown(self, shown: bool) -> None:
        self.edit.setEchoMode(QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password)
        self.retranslate()

    def retranslate(self) -> None:
        self.toggle.setText(tr("settings.secret.hide") if self.toggle.isChecked() else tr("settings.secret.show"))
        self.toggle.setToolTip(tr("settings.secret.toggle_tip"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)


class ToolSection(QFrame):
    """One tool's settings: header from tools.json at once, editors when first shown."""

    def __init__(self, registry: ToolRegistry, tool: str, secrets: SecretStore) -> None:
        super().__init__()
        self.setObjectName("ToolSettings")
        self.tool = tool
        self._registry = registry
        self._secrets = secrets
        self.spec = registry.spec(tool)
        self.form = QFormLayout(self)
        self.form.setContentsMargins(12, 10, 12, 12)
        self.form.setVerticalSpacing(6)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.title = QLabel()
        self.title.setObjectName("Section")
        self.form.addRow(self.title)
        self.fields: dict[str, tuple[FieldInfo, FieldEditor, QLabel, QLabel]] = {}
        self.secret_fields: dict[str, tuple[SecretField, QLabel, QLabel]] = {}
        self.model: type[BaseModel] | None = None
        self.error = ""
        self._built = False
        self._pending: Settings | None = None
        self.retranslate()

    @property
    def built(self) -> bool:
        return self._built

    def build(self) -> None:
        if self._built:
            return
        self._built = True
        try:
            self.model = self._registry.load_class(self.tool).Config
        except Exception as exc:  # a broken module: say so in its section, keep the others
            log.warning("settings for %s unavailable: %s", self.tool, exc)
            self.error = f"{type(exc).__name__}: {exc}"
            note = QLabel(tr("settings.tools.unavailable", error=self.error))
            note.setWordWrap(True)
            self.form.addRow(note)
            return
        for name, info in self.model.model_fields.items():
            editor = editor_for(info)
            label = QLabel()
            hint = QLabel()
            hint.setObjectName("Muted")
            hint.setWordWrap(True)
            self.form.addRow(label, editor.widget)
            self.form.addRow("", hint)
            self.fields[name] = (info, editor, label, hint)
        for secret in self.spec.all_secrets():
            field = SecretField()
            label = QLabel()
            state = QLabel()
            state.setObjectName("Muted")
            state.setWordWrap(True)
            self.form.addRow(label, field)
            self.form.addRow("", state)
            self.secret_fields[secret] = (field, label, state)
        self.retranslate()
        if self.empty:
            self.setVisible(False)  # a tool without settings has no section
        if self._pending is not None:
            self.load(self._pending)

    @property
    def empty(self) -> bool:
        return self._built and not self.fields and not self.secret_fields and not self.error

    def retranslate(self) -> None:
        self.title.setText(f"{pick(self.spec.display.name)}  <span style='font-weight:400'>({self.tool})</span>")
        english = not is_chinese(language())
        for name, (info, _editor, label, hint) in self.fields.items():
            key = f"toolcfg.{self.tool}.{name}"
            # without a translation: the readable field name in English, the field's identifier otherwise
            label.setText(tr(key) if has(key) else readable(name) if english else name)
            mark_content(label) if not has(key) and not english else label.setProperty("weclawContent", False)
            text = tr(f"{key}.hint") if has(f"{key}.hint") else (info.description or "") if english else ""
            hint.setText(text)
            hint.setVisible(bool(text))
        for secret, (field, label, state) in self.secret_fields.items():
            label.setText(pick(self.spec.all_secrets()[secret]))
            field.edit.setPlaceholderText(tr("settings.secret.placeholder"))
            self._show_secret_state(secret, state)

    def _show_secret_state(self, secret: str, state: QLabel) -> None:
        stored = self._secrets.has(secret)
        if not self._secrets.persistent:
            state.setText(tr("settings.secret.session") if stored else tr("settings.secret.no_keyring"))
        else:
            state.setText(tr("settings.secret.stored") if stored else tr("settings.secret.missing"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # --- values ---------------------------------------------------------------------------------
    def defaults(self) -> dict[str, Any]:
        """tools.json's values over the model's defaults: what "not overridden" means."""
        assert self.model is not None
        base = self.model.model_construct().model_dump()  # every field's default (factories too)
        base.update(self.spec.config)
        return base

    def load(self, settings: Settings) -> None:
        self._pending = settings
        if not self._built or self.model is None:
            return
        values = {**self.defaults(), **settings.tools.config.get(self.tool, {})}
        for name, (_info, editor, _label, _hint) in self.fields.items():
            if name in values and values[name] is not None:
                editor.put(values[name])
        for field, _label, _state in self.secret_fields.values():
            field.edit.clear()

    def apply(self, settings: Settings) -> None:
        """Validate with the tool's model (ValueError with its message when wrong), then keep only overrides."""
        if not self._built or self.model is None:
            return
        values = {name: editor.get() for name, (_i, editor, _l, _h) in self.fields.items()}
        try:
            self.model.model_validate({**self.defaults(), **values})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            raise ValueError(f"{pick(self.spec.display.name)} · {where}: {first.get('msg', '')}") from exc
        defaults = self.defaults()
        overrides = {k: v for k, v in values.items() if v != defaults.get(k)}
        config = dict(settings.tools.config)
        if overrides:
            config[self.tool] = overrides
        else:
            config.pop(self.tool, None)
        settings.tools.config = config
        for secret, (field, _label, state) in self.secret_fields.items():
            value = field.edit.text()
            if value:
                self._secrets.set(secret, value)
                field.edit.clear()
            self._show_secret_state(secret, state)


class ToolsPage(QWidget):
    """The generated page: the deny list, then a section per tool with settings (see the module docstring)."""

    def __init__(self, registry: ToolRegistry, secrets: SecretStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._registry = registry
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(8)
        self.filter = QLineEdit()
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._filter)
        outer.addWidget(self.filter)
        self.area = QScrollArea()
        self.area.setWidgetResizable(True)
        self.area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QWidget()
        self.body = QVBoxLayout(body)
        self.body.setContentsMargins(0, 0, 8, 0)
        self.body.setSpacing(10)
        deny_box = QFrame()
        deny_box.setObjectName("ToolSettings")
        deny_layout = QVBoxLayout(deny_box)
        deny_layout.setContentsMargins(12, 10, 12, 12)
        policy_form = QFormLayout()
        policy_form.setContentsMargins(0, 0, 0, 6)
        self.profile = QComboBox()
        mark_content(self.profile)  # profile names are tools.json identifiers
        for name in sorted(registry.manifest.profiles):
            self.profile.addItem(name, name)
        self.profile_label = QLabel()
        policy_form.addRow(self.profile_label, self.profile)
        self.allow = QPlainTextEdit()
        self.allow.setFixedHeight(52)
        self.allow_label = QLabel()
        policy_form.addRow(self.allow_label, self.allow)
        self.allow_hint = QLabel()
        self.allow_hint.setObjectName("Muted")
        self.allow_hint.setWordWrap(True)
        policy_form.addRow("", self.allow_hint)
        deny_layout.addLayout(policy_form)
        self.deny_title = QLabel()
        self.deny_title.setObjectName("Section")
        deny_layout.addWidget(self.deny_title)
        self.deny = QPlainTextEdit()
        self.deny.setFixedHeight(64)
        deny_layout.addWidget(self.deny)
        self.deny_hint = QLabel()
        self.deny_hint.setObjectName("Muted")
        self.deny_hint.setWordWrap(True)
        deny_layout.addWidget(self.deny_hint)
        self.deny_section = deny_box
        self.body.addWidget(deny_box)
        self.sections: dict[str, ToolSection] = {}
        for tool in registry.tool_names(include_disabled=True):
            spec = registry.spec(tool)
            if registry.is_dynamic(tool) or (not spec.enabled and not spec.config):
                continue
            section = ToolSection(registry, tool, secrets)
            self.sections[tool] = section
            self.body.addWidget(section)
        self.body.addStretch(1)
        self.area.setWidget(body)
        outer.addWidget(self.area, 1)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.retranslate()

    def retranslate(self) -> None:
        self.filter.setPlaceholderText(tr("settings.tools.filter"))
        self.deny_title.setText(tr("settings.tools.deny"))
        self.profile_label.setText(tr("settings.tools.profile"))
        self.allow_label.setText(tr("settings.tools.allow"))
        self.allow_hint.setText(tr("settings.tools.allow_hint"))
        self.deny_hint.setText(tr("settings.tools.deny_hint"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.build()

    def build(self) -> None:
        """Make every section's editors (imports the tool modules once). A section that fails says so."""
        for section in self.sections.values():
            try:
                section.build()
            except Exception as exc:  # never let one tool break the page (this runs in showEvent)
                log.exception("settings section %s failed", section.tool)
                section.error = f"{type(exc).__name__}: {exc}"
        self._filter(self.filter.text())

    def _filter(self, text: str) -> None:
        needle = text.strip().lower()
        for tool, section in self.sections.items():
            spec = section.spec
            hay = f"{tool} {spec.display.name.en} {spec.display.name.zh}".lower()
            section.setVisible(not section.empty and (not needle or needle in hay))

    def show_section(self, name: str) -> QWidget | None:
        """Bring a section on screen: a tool's name, or "deny" (the deny list). None if there is none."""
        self.build()
        policy = ("deny", "deny list", "allow list", "profile", str(tr("settings.tools.deny")).lower())
        target: QWidget | None = self.deny_section if name.lower() in policy else None
        if target is None:
            target = self.sections.get(name) or next(
                (s for t, s in self.sections.items() if name.lower() in (t, s.spec.display.name.en.lower())), None
            )
        if target is not None:
            self.filter.clear()
            body = self.area.widget()
            layout = body.layout() if body is not None else None
            if layout is not None:
                layout.activate()  # the sections were just made: place them before scrolling
            self.area.ensureWidgetVisible(target, 0, 0)
            QTimer.singleShot(0, self, lambda: self._reveal(target))  # again once laid out on screen
        return target

    def _reveal(self, target: QWidget) -> None:
        from shiboken6 import isValid

        if isValid(self) and isValid(target):
            self.area.ensureWidgetVisible(target, 0, 0)

    def section_widgets(self) -> list[QWidget]:
        return [self.deny_section, *self.sections.values()]

    def load(self, settings: Settings) -> None:
        policy = settings.tools.policy
        self.deny.setPlainText("\n".join(policy.deny))
        self.allow.setPlainText("\n".join(policy.allow))
        if self.profile.findData(policy.profile) < 0:
            self.profile.addItem(policy.profile, policy.profile)
        self.profile.setCurrentIndex(self.profile.findData(policy.profile))
        for section in self.sections.values():
            section.load(settings)

    def apply(self, settings: Settings) -> None:
        def lines(edit: QPlainTextEdit) -> list[str]:
            return [line.strip() for line in edit.toPlainText().replace(",", "\n").splitlines() if line.strip()]

        policy = settings.tools.policy
        update = {"deny": lines(self.deny), "allow": lines(self.allow), "profile": self.profile.currentData()}
        if any(getattr(policy, k) != v for k, v in update.items()):
            settings.tools.policy = policy.model_copy(update=update)
        for section in self.sections.values():
            section.apply(settings)
