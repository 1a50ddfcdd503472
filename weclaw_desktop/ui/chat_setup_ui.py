"""Keeps the composer's pickers in step with the open chat: its assistant (and custom instructions), its model
and what that model can do, and the chat's tokens and cost. Before the first message of a new chat, what the user
picks is remembered and applied when the chat is created.

Also tells the tool panel which tools the chat's assistant may use (the loop enforces it; the panel shows it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from weclaw_desktop.i18n import tr
from weclaw_desktop.settings import SettingsChange, SettingsStore
from weclaw_desktop.ui.composer import Composer
from weclaw_desktop.ui.model_switcher import AssistantChoice, ModelChoice, ShownCaps
from weclaw_desktop.ui.tasks import TaskSet

if TYPE_CHECKING:
    from weclaw_desktop.agent.runtime import AgentRuntime
    from weclaw_desktop.agent.usage import UsageSum
    from weclaw_desktop.ui.chat_controller import ChatController

log = logging.getLogger("weclaw.ui")


class InstructionsDialog(QDialog):
    """This chat's custom instructions (opened with ``open()``; ``text_accepted(text)``)."""

    text_accepted = Signal(str)

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("instructions.title"))
        self.resize(520, 320)
        layout = QVBoxLayout(self)
        hint = QLabel(tr("instructions.hint"))
        hint.setWordWrap(True)
        hint.setObjectName("Muted")
        layout.addWidget(hint)
        self.edit = QPlainTextEdit(text)
        self.edit.setPlaceholderText(tr("instructions.placeholder"))
        layout.addWidget(self.edit, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._save)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def _save(self) -> None:
        self.text_accepted.emit(self.edit.toPlainText())
        self.accept()


class ChatSetupUi(QObject):
    usage_changed = Signal(object)  # UsageSum of the open chat (None: nothing yet)
    model_shown = Signal(str, str)  # (configuration, model) answering the open chat

    def __init__(
        self,
        controller: ChatController,
        composer: Composer,
        store: SettingsStore,
        *,
        open_settings: Callable[[str], Any],
        on_assistant_tools: Callable[[str, list[str] | None], None] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.controller = controller
        self.composer = composer
        self.store = store
        self._open_settings = open_settings
        self._on_assistant_tools = on_assistant_tools
        self._tasks = TaskSet("chat setup")
        self.pending: dict[str, str] = {}  # picks made before the chat exists: provider, model, assistant
        self.usage: UsageSum | None = None
        self.dialog: InstructionsDialog | None = None
        composer.model_switcher.chosen.connect(lambda p, m: self._tasks.spawn(self.choose_model(p, m)))
        composer.model_switcher.settings_requested.connect(lambda: self._open_settings("models"))
        composer.assistant_picker.chosen.connect(lambda a: self._tasks.spawn(self.choose_assistant(a)))
        composer.assistant_picker.settings_requested.connect(lambda: self._open_settings("assistants"))
        composer.assistant_picker.instructions_requested.connect(lambda: self._tasks.spawn(self.edit_instructions()))
        controller.session_shown.connect(lambda _sid: self.refresh())
        controller.usage_reported.connect(lambda sid: self._tasks.spawn(self.refresh_usage(sid)))
        self._unsubscribe = store.subscribe(self._settings_changed, {"providers", "assistants"})

    def close(self) -> None:
        self._unsubscribe()

    def _settings_changed(self, _change: SettingsChange) -> None:
        self.refresh()

    # --- what the pickers show ----------------------------------------------------------------------
    def refresh(self) -> None:
        """Show the open chat's setup (once the runtime is attached; nothing to do before: no event loop yet)."""
        if self.controller.runtime is None:
            return
        self._tasks.spawn(self._refresh())

    async def _refresh(self) -> None:
        runtime = await self.controller.ready()
        sid = self.controller.session_id
        settings = self.store.settings
        if sid:
            self.pending.clear()
            setup = await runtime.chat_setup(sid)
            entry, model, assistant = await runtime.who_answers(sid)
            instructions = bool(setup.instructions)
        else:
            assistant = settings.assistants.resolve(self.pending.get("assistant", ""))
            entry = runtime.provider_entry(self.pending.get("provider") or assistant.provider)
            model = self.pending.get("model") or assistant.model or entry.model
            instructions = bool(self.pending.get("instructions"))
        choices = [ModelChoice(p, m) for p, m in runtime.model_choices()]
        current = ModelChoice(entry.name, model) if model else None
        if current is not None and current not in choices:
            choices.insert(0, current)
        self.composer.model_switcher.set_choices(choices, current)
        if current is not None:
            self.model_shown.emit(current.provider, current.model)
        assistants = [AssistantChoice(a.id, a.name, a.icon) for a in settings.assistants.entries]
        self.composer.assistant_picker.set_assistants(assistants, assistant.id, instructions=instructions)
        if self._on_assistant_tools is not None:
            self._on_assistant_tools(assistant.name, assistant.tools)
        caps = await runtime.capabilities(entry, model) if model else None
        self.composer.caps.set_caps(ShownCaps(caps.tools, caps.vision, caps.reasoning) if caps else ShownCaps())
        await self.refresh_usage(sid)

    async def refresh_usage(self, session_id: str) -> None:
        if session_id != self.controller.session_id:
            return
        runtime = await self.controller.ready()
        self.usage = await runtime.usage(session_id) if session_id else None
        self.usage_changed.emit(self.usage)

    # --- the user's picks -------------------------------------------------------------------------------
    async def choose_model(self, provider: str, model: str) -> None:
        runtime = await self.controller.ready()
        sid = self.controller.session_id
        if sid:
            await runtime.set_chat_model(sid, provider, model)
        else:
            self.pending.update(provider=provider, model=model)
        await self._refresh()

    async def choose_assistant(self, assistant_id: str) -> None:
        runtime = await self.controller.ready()
        sid = self.controller.session_id
        assistant = self.store.settings.assistants.resolve(assistant_id)
        if sid:
            await runtime.set_chat_assistant(sid, assistant_id)
        else:
            self.pending = {
                "assistant": assistant_id,
                **({"instructions": self.pending["instructions"]} if "instructions" in self.pending else {}),
            }
            if assistant.model:
                self.pending.update(provider=runtime.provider_entry(assistant.provider).name, model=assistant.model)
        await self._refresh()

    async def edit_instructions(self) -> None:
        runtime = await self.controller.ready()
        sid = self.controller.session_id
        text = (await runtime.chat_setup(sid)).instructions if sid else self.pending.get("instructions", "")
        dialog = InstructionsDialog(text, self.composer.window())
        dialog.text_accepted.connect(lambda t: self._tasks.spawn(self._save_instructions(t)))
        self.dialog = dialog
        dialog.open()

    async def _save_instructions(self, text: str) -> None:
        runtime = await self.controller.ready()
        sid = self.controller.session_id
        if sid:
            await runtime.set_instructions(sid, text)
        else:
            self.pending["instructions"] = text.strip()
        await self._refresh()

    async def apply_pending(self, runtime: AgentRuntime, session_id: str) -> None:
        """A chat was just created for the first message: give it what was picked before."""
        picks, self.pending = dict(self.pending), {}
        if picks.get("assistant"):
            await runtime.set_chat_assistant(session_id, picks["assistant"])
        if picks.get("provider") and picks.get("model"):
            await runtime.set_chat_model(session_id, picks["provider"], picks["model"])
        if picks.get("instructions"):
            await runtime.set_instructions(session_id, picks["instructions"])

    def new_chat_assistant(self) -> str:
        return self.pending.get("assistant", "")
