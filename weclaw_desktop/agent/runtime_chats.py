"""The conversation features of :class:`~weclaw_desktop.agent.runtime.AgentRuntime` (a mixin, to keep the
runtime module to its one job of composing and running):

- saved provider configurations: a :class:`Provider` per (configuration, model), made on first use and
  retired when the configurations change; each chat remembers its configuration and model;
- assistants: the chat's assistant gives the turn its prompt, its tool profile and its generation settings;
- branches: edit a user message, regenerate or retry an answer (new turns beside the old ones), page between
  them, delete a turn or an answer;
- titles from the first exchange; usage and cost per chat.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from weclaw_desktop.agent import model_caps, titles
from weclaw_desktop.agent.chat_setup import ChatSetup, TitleSource
from weclaw_desktop.agent.history_branches import BranchInfo, BranchKind
from weclaw_desktop.agent.model_caps import Caps
from weclaw_desktop.agent.provider import Capabilities, Provider, ProviderConfig, StreamTimeouts, ThinkingChoice
from weclaw_desktop.agent.turn_plan import TurnPlan, prompt_extra
from weclaw_desktop.agent.usage import Price, UsageRow, UsageSum, price_for, summarize
from weclaw_desktop.attachments import Attachment
from weclaw_desktop.secrets import API_KEY_ENV, join_url_password, split_url_password, url_password_name
from weclaw_desktop.settings import ProviderSettings, Settings
from weclaw_desktop.settings.conversation import AssistantSettings
from weclaw_desktop.toolkit.base import Origin
from weclaw_desktop.toolkit.redact import register_secret

if TYPE_CHECKING:
    from weclaw_desktop.agent.history import HistoryStore, SessionInfo
    from weclaw_desktop.paths import AppPaths
    from weclaw_desktop.secrets import SecretStore

log = logging.getLogger("weclaw.runtime")

TitleListener = Callable[[str, str], None]  # (session id, new title)
TurnHandle = Any  # agent.runtime.TurnHandle (not imported: runtime imports this module)


class ImagesRefused(ValueError):
    """Images were attached for a model that cannot see them; ``message`` says which model and what to do."""


class ChatFeatures:
    settings: Settings
    history: HistoryStore
    secrets: SecretStore
    paths: AppPaths
    _env_keys: dict[str, str]
    _api_key_override: str | None
    _providers: dict[tuple[str, str], Provider]
    _retired: list[Provider]
    _side_tasks: set[asyncio.Task[Any]]
    title_listeners: list[TitleListener]
    origin: Origin

    start_turn: Callable[..., TurnHandle]  # AgentRuntime.start_turn

    # --- provider configurations -----------------------------------------------------------------
    def provider_entry(self, name: str = "") -> ProviderSettings:
        """The saved configuration called ``name`` (the active one for '' or a name that is gone)."""
        return (self.settings.providers.get(name) if name else None) or self.settings.providers.current

    def provider_config(self, entry: ProviderSettings | None = None, model: str = "") -> ProviderConfig:
        p = entry or self.settings.provider
        url, typed = split_url_password(p.base_url)  # an old settings.json may still hold one: it is used
        password = typed or self.secrets.get(url_password_name(p.api_key_name)) if "@" in p.base_url else None
        register_secret(password)
        return ProviderConfig(
            base_url=join_url_password(url, password) if password else p.base_url,
            model=model or p.model,
            api_key=self.api_key(p),
            timeout_s=p.timeout_s,
            max_retries=p.max_retries,
            preset=p.preset,
            timeouts=StreamTimeouts(p.connect_timeout_s, p.first_token_timeout_s, p.idle_timeout_s),
            thinking=ThinkingChoice(p.thinking, p.reasoning_effort),
            capabilities={name: Capabilities(**c.model_dump()) for name, c in p.capabilities.items()},
        )

    def api_key(self, entry: ProviderSettings | None = None) -> str | None:
        """The key of a configuration: an explicit override, then its keyring entry, then WECLAW_API_KEY /
        OPENAI_API_KEY."""
        if self._api_key_override:
            return self._api_key_override
        stored = self.secrets.get((entry or self.settings.provider).api_key_name)
        if stored:
            return stored
        for name in API_KEY_ENV:
            if self._env_keys.get(name):
                return self._env_keys[name]
        return None

    def provider_for(self, entry: ProviderSettings, model: str) -> Provider:
        """The provider answering ``model`` of ``entry`` (one per pair, kept until the settings change)."""
        key = (entry.name, model or entry.model)
        provider = self._providers.get(key)
        if provider is None:
            provider = self._providers[key] = Provider(self.provider_config(entry, model))
        return provider

    def _retire_providers(self) -> None:
        self._retired.extend(self._providers.values())
        self._providers.clear()

    async def capabilities(self, entry: ProviderSettings, model: str) -> Caps:
        return await model_caps.capabilities(self.provider_for(entry, model), entry, model or entry.model)

    def model_choices(self) -> list[tuple[str, str]]:
        """(configuration, model) pairs for the switcher, configured ones only."""
        return [(p.name, m) for p in self.settings.providers.entries if p.base_url for m in p.model_choices()]

    # --- chats ----------------------------------------------------------------------------------------
    async def chat_setup(self, session_id: str) -> ChatSetup:
        return await self.history.chats.get(session_id)

    async def start_chat(self, session: SessionInfo, assistant_id: str = "") -> ChatSetup:
        """A new chat starts from an assistant (default: the default one) with its provider and model."""
        assistant = self.settings.assistants.resolve(assistant_id)
        entry = self.provider_entry(assistant.provider)
        return await self.history.chats.update(
            session.id, assistant=assistant.id, provider=entry.name, model=assistant.model or entry.model
        )

    async def set_chat_model(self, session_id: str, provider: str, model: str) -> ChatSetup:
        """The model switcher: this chat is answered by ``model`` of configuration ``provider`` from now on."""
        if self.settings.providers.get(provider) is None:
            raise KeyError(f"no saved provider configuration '{provider}'")
        return await self.history.chats.update(session_id, provider=provider, model=model)

    async def set_chat_assistant(self, session_id: str, assistant_id: str) -> ChatSetup:
        if self.settings.assistants.get(assistant_id) is None:
            raise KeyError(f"no assistant '{assistant_id}'")
        return await self.history.chats.update(session_id, assistant=assistant_id)

    async def set_instructions(self, session_id: str, text: str) -> ChatSetup:
        return await self.history.chats.update(session_id, instructions=text.strip()[:20_000])

    def assistant_of(self, setup: ChatSetup) -> AssistantSettings:
        return self.settings.assistants.resolve(setup.assistant)

    async def who_answers(self, session_id: str) -> tuple[ProviderSettings, str, AssistantSettings]:
        """The configuration, model and assistant of a chat's next turn."""
        setup = await self.chat_setup(session_id) if session_id else ChatSetup()
        assistant = self.assistant_of(setup)
        entry = self.provider_entry(setup.provider or assistant.provider)
        model = setup.model if setup.provider == entry.name and setup.model else assistant.model or entry.model
        return entry, model, assistant

    async def plan_turn(
        self,
        session_id: str,
        *,
        parent: str | None = None,
        kind: BranchKind = "new",
        attachments: Sequence[Attachment] = (),
    ) -> TurnPlan:
        setup = await self.chat_setup(session_id)
        entry, model, assistant = await self.who_answers(session_id)
        caps = await self.capabilities(entry, model)
        return TurnPlan(
            provider=self.provider_for(entry, model),
            provider_name=entry.name,
            model=model,
            vision=caps.vision,
            assistant=assistant.name,
            prompt_extra=prompt_extra(assistant.name, assistant.system_prompt, setup.instructions),
            tool_allowed=None if assistant.tools is None else assistant.allows_tool,
            params=assistant.generation.request_fields(),
            parent=parent,
            kind=kind,
            attachments=tuple(attachments),
        )

    async def check_attachments(self, session_id: str, attachments: Sequence[Attachment]) -> None:
        """Raise :class:`ImagesRefused` when images are attached for a model marked as not seeing images."""
        images = [a for a in attachments if a.is_image]
        if not images:
            return
        entry, model, _assistant = await self.who_answers(session_id)
        caps = await self.capabilities(entry, model)
        if caps.vision is False:
            names = ", ".join(a.name for a in images)
            raise ImagesRefused(
                f"The model {model} cannot see images, so {names} was not sent. Choose a model that accepts "
                "images in the model switcher, or remove the image."
            )

    def attachment_dir(self) -> Path:
        return self.paths.data / "attachments"

    # --- branches ------------------------------------------------------------------------------------
    async def branch_infos(self, session_id: str) -> dict[str, BranchInfo]:
        return await self.history.branches.infos(session_id)

    async def select_branch(self, session_id: str, run_id: str) -> bool:
        return await self.history.branches.select(session_id, run_id)

    async def edit(self, session_id: str, run_id: str, text: str, **kwargs: Any) -> TurnHandle:
        """Send ``text`` in place of the user message of ``run_id``: a new branch beside it (the old one stays)."""
        parent = await self.history.branches.parent_of(session_id, run_id)
        if parent is None:
            raise KeyError(f"no turn {run_id} in this chat")
        return self.start_turn(session_id, text, parent=parent, kind="edit", **kwargs)

    async def regenerate(self, session_id: str, run_id: str = "", **kwargs: Any) -> TurnHandle:
        """A new answer to the user message of ``run_id`` (default: the last turn); the old answer stays."""
        run_id = run_id or await self.history.branches.leaf(session_id)
        parent = await self.history.branches.parent_of(session_id, run_id)
        if parent is None:
            raise KeyError(f"no turn {run_id} in this chat")
        text = await self._user_text(session_id, run_id)
        attachments = (await self.history.attachments.by_run(session_id, [run_id])).get(run_id, [])
        kind: BranchKind = kwargs.pop("kind", "regenerate")
        return self.start_turn(session_id, text, parent=parent, kind=kind, attachments=attachments, **kwargs)

    async def retry(self, session_id: str, run_id: str, **kwargs: Any) -> TurnHandle:
        """Retry a turn that failed: a failed attempt that produced nothing is replaced, one with a partial
        answer is kept as a branch."""
        messages = [m for m in await self.history.messages(session_id) if m.run_id == run_id]
        produced = any(m.role != "user" and (m.content or m.tool_calls) for m in messages)
        if not produced and messages:
            parent = await self.history.branches.parent_of(session_id, run_id)
            text = await self._user_text(session_id, run_id)
            attachments = (await self.history.attachments.by_run(session_id, [run_id])).get(run_id, [])
            await self.history.branches.delete_turn(session_id, run_id)
            return self.start_turn(session_id, text, parent=parent, kind="retry", attachments=attachments, **kwargs)
        return await self.regenerate(session_id, run_id, kind="retry", **kwargs)

    async def delete_turn(self, session_id: str, run_id: str) -> bool:
        """Delete an exchange (the user message and its answer); later messages stay."""
        return await self.history.branches.delete_turn(session_id, run_id)

    async def delete_answer(self, session_id: str, run_id: str) -> bool:
        return await self.history.branches.delete_answer(session_id, run_id)

    async def _user_text(self, session_id: str, run_id: str) -> str:
        for m in await self.history.messages(session_id, all_branches=True):
            if m.run_id == run_id and m.role == "user":
                return m.content
        raise KeyError(f"no turn {run_id} in this chat")

    # --- titles --------------------------------------------------------------------------------------
    async def rename_chat(self, session_id: str, title: str) -> bool:
        """The user's own title: never replaced by a generated one."""
        return await self.history.chats.set_title(session_id, title, "user")

    def after_turn(self, session_id: str, reason: str) -> None:
        """Called when a turn ended: the first completed exchange of a chat gets its title (a cleaned first line;
        in the desktop app the model writes one when ``agent.model_titles`` is on; ``weclaw chat`` makes no
        side request: one-shot runs exit before it would answer)."""
        if reason != "completed":
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # the loop is gone (shutdown)
            return
        task = loop.create_task(self._title(session_id), name=f"title-{session_id}")
        self._side_tasks.add(task)
        task.add_done_callback(self._side_tasks.discard)

    async def _title(self, session_id: str) -> None:
        try:
            setup = await self.chat_setup(session_id)
            if setup.title_source != "auto":
                return
            messages = await self.history.messages(session_id)
            users = [m for m in messages if m.role == "user"]
            if len(users) != 1:
                return
            answer = next((m.content for m in reversed(messages) if m.role == "assistant" and m.content), "")
            title = titles.clean_title(users[0].content)
            source: TitleSource = "auto"
            if title:  # at once: a model title may take seconds, or never come
                await self.history.chats.set_title(session_id, title, "auto")
            entry, model, _assistant = await self.who_answers(session_id)
            if self.settings.agent.model_titles and self.origin is Origin.GUI and entry.configured:
                generated, completion, sent = await titles.model_title(
                    self.provider_for(entry, model), users[0].content, answer
                )
                if completion is not None:
                    await self._title_usage(session_id, users[0].run_id, entry, model, completion, sent)
                if generated:
                    title, source = generated, "model"
            if not title:
                return
            if not await self.history.chats.set_title(session_id, title, source):  # renamed meanwhile
                return
        except (KeyError, asyncio.CancelledError):
            raise
        except Exception:  # a title is a nicety
            log.exception("could not title chat %s", session_id)
            return
        for listener in list(self.title_listeners):
            try:
                listener(session_id, title)
            except Exception:
                log.exception("title listener failed")

    async def _title_usage(
        self, session_id: str, run_id: str, entry: ProviderSettings, model: str, completion: Any, sent: Any
    ) -> None:
        """The title request is paid too: recorded as round 0 of the first turn."""
        from weclaw_desktop.agent.turn_extras import usage_of

        usage = usage_of(completion, sent, ())
        await self.history.usage.add(
            session_id,
            run_id,
            0,
            provider=entry.name,
            model=model,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            estimated=usage.estimated,
        )

    # --- usage --------------------------------------------------------------------------------------------
    def price_of(self, row: UsageRow) -> Price | None:
        entry = self.settings.providers.get(row.provider)
        return price_for(entry, row.model) if entry is not None else None

    async def usage_rows(self, session_id: str) -> list[UsageRow]:
        return await self.history.usage.rows(session_id)

    async def usage(self, session_id: str) -> UsageSum:
        """Tokens (and cost, when every price is known) of a whole chat, every branch included (all were paid)."""
        return summarize(await self.usage_rows(session_id), self.price_of)
