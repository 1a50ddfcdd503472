"""The conversation features' parts of the main window (#16), wired in one place so the window stays small:
the composer's assistant/model pickers (``ChatSetupUi``), export/import from the sidebar (``ChatExport``),
the message actions (``MessageActions``), the status bar's model and usage of the open chat, and the jump to the
matching message when a chat is opened from the sidebar's search."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from weclaw_desktop import i18n
from weclaw_desktop.i18n import tr
from weclaw_desktop.ui.chat_export import ChatExport
from weclaw_desktop.ui.chat_setup_ui import ChatSetupUi
from weclaw_desktop.ui.message_actions import MessageActions

if TYPE_CHECKING:
    from weclaw_desktop.ui.settings_dialog import SettingsDialog


class ConversationParts:
    def __init__(self, window: Any) -> None:  # the MainWindow (not imported: it imports this module)
        self.window = window
        self.usage: Any = None  # the open chat's UsageSum (None until the history answered)
        self.chat_model = ("", "")  # (configuration, model) answering the open chat
        self.setup = ChatSetupUi(
            window.controller,
            window.composer,
            window.store,
            open_settings=self.open_settings_page,
            on_assistant_tools=window.board.set_assistant,
            parent=window,
        )
        window.controller.setup_ui = self.setup
        self.setup.usage_changed.connect(self.show_usage)
        self.setup.model_shown.connect(self.show_chat_model)
        self.export = ChatExport(window.controller, window)
        window.sidebar.export_requested.connect(self.export.export)
        window.sidebar.import_requested.connect(self.export.import_chat)
        # edit-and-resend replaces the window's "Up puts the last message back" (see MainWindow.edit_last_message)
        window.chat.edit_last_requested.disconnect(window.edit_last_message)
        self.actions = MessageActions(window.chat, window.controller, window.composer)
        window.controller.session_shown.connect(self.show_search_hit)

    def show_search_hit(self, _session_id: str) -> None:
        """A chat opened from the sidebar's search: find the words in it (highlighted, newest match first,
        next/previous in the find bar)."""
        query = self.window.controller.query
        bar = getattr(self.window, "find_bar", None)
        if not query or bar is None or not self.window.chat.has_content:
            return
        bar.edit.setText(query)
        bar.open_bar()
        if not bar.matches and " " in query:  # the search matches words anywhere; the bar finds one of them
            bar.edit.setText(max(query.split(), key=len))
            bar.search()

    def retranslate(self) -> None:
        if self.usage is not None:
            self.show_usage(self.usage)
        self.show_chat_model(*self.chat_model)

    def open_settings_page(self, page: str) -> SettingsDialog:
        """Settings, showing ``page``: "models" or "assistants"."""
        dialog: SettingsDialog = self.window.open_settings()
        target = {"models": dialog.providers_page, "assistants": dialog.assistants_page}.get(page)
        if target is not None and target in dialog.pages:
            dialog.show_page(dialog.pages.index(target))
        return dialog

    def show_chat_model(self, provider: str = "", model: str = "") -> None:
        """The status bar names what answers the open chat (the composer's switcher says which)."""
        self.chat_model = (provider, model)
        settings = self.window.settings
        p = settings.providers.get(provider) or settings.provider
        label = self.window.provider_label
        if p.configured:
            preset = p.preset or "custom"
            try:
                from weclaw_desktop.agent.presets import get_preset

                name = get_preset(preset).short_label(i18n.language()) if preset != "custom" else p.base_url
            except (ImportError, KeyError):  # pragma: no cover - the agent package is part of the app
                name = preset
            label.setText(f"{name} · {model or p.model}")
            label.setToolTip(f"{name} · {model or p.model}")
        else:
            label.setText(tr("statusbar.no_provider"))

    def show_usage(self, usage: Any) -> None:
        """The open chat's tokens from the history (every request, estimated ones marked ≈) and its cost when
        every price is known."""
        from weclaw_desktop.agent.usage import format_cost, format_tokens

        self.usage = usage
        label = self.window.tokens_label
        if usage is None or not usage.total:
            label.setText(tr("statusbar.tokens", n=0))
            return
        text = tr("statusbar.usage", tokens=format_tokens(usage.total, usage.estimated))
        cost = format_cost(usage.cost)
        label.setText(f"{text} · {cost}" if cost else text)
        tip = [tr("statusbar.usage.tip", prompt=f"{usage.prompt_tokens:,}", completion=f"{usage.completion_tokens:,}")]
        if usage.estimated:
            tip.append(tr("statusbar.usage.estimated"))
        label.setToolTip("\n".join(tip))
