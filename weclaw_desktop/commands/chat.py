"""``weclaw chat``: talk to the agent from the terminal (one message, or an interactive prompt).

The answer streams to stdout with a line per tool call; ``--json`` prints every event as a JSON line
instead. The exit code is 0 when the turn completed, otherwise non-zero with a one-line reason on
stderr: 1 error, 2 bad usage or setup, 3 stopped by a limit (max rounds, loop guard), 130 stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any, TextIO

from weclaw_desktop.agent import events as ev
from weclaw_desktop.agent.call_times import timing_parts
from weclaw_desktop.agent.terminal import LineReader, TerminalGate
from weclaw_desktop.i18n import tr
from weclaw_desktop.secrets import env_secret
from weclaw_desktop.toolkit.approval import ApprovalGate, AutoApprove, AutoDeny
from weclaw_desktop.toolkit.base import Origin, ToolStatus

#: How long ``weclaw chat`` waits for the MCP servers of the settings before the first turn.
MCP_WAIT_S = 20.0
EXIT = {"completed": 0, "error": 1, "max_rounds": 3, "loop_guard": 3, "budget": 3, "cancelled": 130}


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("chat", help="chat with the assistant in the terminal")
    p.add_argument("message", nargs="?", help="the message; without it, an interactive prompt starts")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--session", metavar="ID", help="continue this conversation")
    group.add_argument("--new", action="store_true", help="start a new conversation (default: continue the latest)")
    p.add_argument("--json", action="store_true", help="print events as JSON lines")
    p.add_argument("--provider", metavar="NAME", help="a saved provider configuration (Settings > Model)")
    p.add_argument(
        "--attach", metavar="FILE", action="append", default=[], help="send a file with the message (repeatable)"
    )
    p.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. https://api.deepseek.com/v1")
    p.add_argument("--model", help="model name")
    p.add_argument("--api-key-env", metavar="NAME", help="read the API key from this environment variable")
    approval = p.add_mutually_exclusive_group()
    approval.add_argument("--yes", action="store_true", help="approve every tool call without asking")
    approval.add_argument("--deny-risky", action="store_true", help="deny medium and high risk calls, never ask")
    p.add_argument("--max-rounds", type=int, metavar="N", help="model rounds per message (default 12)")
    p.add_argument("--exposure", choices=["progressive", "all"], help="which tools the model sees")
    p.add_argument("--tools", metavar="PATH", help="tools.json to use (default: the bundled one)")
    p.add_argument("--no-mcp", action="store_true", help="do not start the MCP servers of the settings")
    p.add_argument("--hide-reasoning", action="store_true", help="do not print the model's thinking")
    thinking = p.add_mutually_exclusive_group()
    thinking.add_argument(
        "--reasoning-effort",
        metavar="LEVEL",
        help="thinking effort (the levels depend on the provider, e.g. low, high)",
    )
    thinking.add_argument("--no-thinking", action="store_true", help="switch the model's thinking off")
    p.add_argument("--data-dir", dest="chat_data_dir", default=argparse.SUPPRESS, help="same as WECLAW_HOME")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from weclaw_desktop.storage.faults import StorageError, storage_error

    data_dir = getattr(args, "chat_data_dir", None)
    if data_dir:
        os.environ["WECLAW_HOME"] = os.path.abspath(data_dir)
    if args.max_rounds is not None and not 1 <= args.max_rounds <= 100:
        return _fail(tr("cli.chat.max_rounds"), 2)
    try:
        return asyncio.run(_main(args))
    except StorageError as exc:  # the database or the disk: one line, never a traceback
        return _fail(exc.message)
    except OSError as exc:  # the data folder itself (full or read-only disk)
        fault = storage_error(exc, Path(exc.filename or "."))
        if fault is None:
            raise
        return _fail(fault.message)


def _fail(message: str, code: int = 1) -> int:
    print(tr("cli.error", message=message), file=sys.stderr)
    return code


async def _main(args: argparse.Namespace) -> int:
    from weclaw_desktop.agent.runtime import AgentRuntime
    from weclaw_desktop.paths import app_paths
    from weclaw_desktop.settings import SettingsStore
    from weclaw_desktop.toolkit.manifest import ManifestError

    paths = app_paths().ensure()
    store = SettingsStore.open(paths)
    for problem in store.errors:
        print(f"warning: settings: {problem.line()}", file=sys.stderr)
    settings = store.snapshot()  # the command-line options below change this run only, never the file
    if args.provider:
        if settings.providers.get(args.provider) is None:
            names = ", ".join(p.name for p in settings.providers.entries)
            return _fail(tr("cli.chat.no_provider", name=args.provider, names=names), 2)
        settings.providers.active = args.provider
    if args.base_url:
        settings.provider.base_url = args.base_url
        settings.provider.preset = ""
    if args.model:
        settings.provider.model = args.model
    if args.max_rounds is not None:
        settings.agent.max_rounds = args.max_rounds
    if args.exposure:
        settings.agent.exposure = args.exposure
    if args.deny_risky:
        settings.agent.approvals.rules["cli"] = {"low": "allow", "medium": "deny", "high": "deny"}
    if args.api_key_env and not env_secret(args.api_key_env):
        return _fail(tr("cli.chat.no_env", name=args.api_key_env), 2)
    if not settings.provider.configured:
        return _fail(tr("cli.chat.no_endpoint"), 2)
    thinking_problem = _thinking(settings, args)
    if thinking_problem:
        return _fail(thinking_problem, 2)

    reader = LineReader()
    gate: ApprovalGate = AutoApprove() if args.yes else AutoDeny() if args.deny_risky else TerminalGate(reader)
    try:
        rt = AgentRuntime.create(
            settings, paths=paths, tools_json=args.tools, origin=Origin.CLI, gate=gate, api_key_env=args.api_key_env
        )
    except ManifestError as exc:
        return _fail(tr("cli.chat.bad_tools", problem=str(exc).splitlines()[0]), 2)
    if rt.db.recovered is not None:  # a damaged database was moved aside: say where it is kept
        print(f"[{rt.db.recovered.message}]", file=sys.stderr)
    mcp = None if args.no_mcp else _mcp_manager(rt, settings, paths, reader)
    try:
        if mcp is not None:
            await _start_mcp(mcp, settings)
        await rt.recover()
        session_id = await _session(rt, args)
        if session_id is None:
            return _fail(tr("cli.chat.no_session", id=args.session), 2)
        if not session_id:
            return _fail(tr("cli.chat.session_busy", id=args.session), 2)
        if args.provider or args.base_url or args.model:  # the chat is answered by what was asked for
            await rt.set_chat_model(session_id, settings.provider.name, settings.provider.model)
        attachments = await _attachments(rt, session_id, args.attach)
        if isinstance(attachments, int):
            return attachments
        printer = JsonPrinter(sys.stdout) if args.json else TextPrinter(sys.stdout, sys.stderr, args.hide_reasoning)
        if not args.json:
            print(tr("cli.chat.session", id=session_id), file=sys.stderr)
        if args.message is not None:
            if not args.message.strip():
                return _fail(tr("cli.chat.empty"), 2)
            done = await _turn(rt, session_id, args.message, printer, attachments)
            return _report(done, args.json)
        return await _interactive(rt, session_id, printer, reader, args.json, attachments)
    finally:
        if mcp is not None:
            await mcp.stop_all()
        await rt.close()


def _thinking(settings: Any, args: argparse.Namespace) -> str:
    """Apply --reasoning-effort / --no-thinking to the settings; a reason when the provider cannot do it."""
    from weclaw_desktop.agent.provider import ThinkingChoice, ThinkingUnsupported, check_thinking, profile_for

    p = settings.provider
    if args.no_thinking:
        p.thinking, p.reasoning_effort = "off", ""
    elif args.reasoning_effort:
        p.thinking, p.reasoning_effort = "default", args.reasoning_effort
    profile = profile_for(p.preset, p.base_url)
    try:
        check_thinking(profile.thinking, ThinkingChoice(p.thinking, p.reasoning_effort), profile.label)
    except ThinkingUnsupported as exc:
        return str(exc)
    return ""


def _mcp_manager(rt: Any, settings: Any, paths: Any, reader: LineReader) -> Any:
    """A manager for the enabled MCP servers of the settings; None without any. Servers may ask the
    person at this terminal (elicitation, sampling) and learn the allowed folders (roots)."""
    if not any(s.enabled for s in settings.mcp_servers):
        return None
    from weclaw_desktop.agent.mcp_client import ProviderSampler, TerminalUserAgent
    from weclaw_desktop.mcp import McpManager
    from weclaw_desktop.mcp.config import roots_of
    from weclaw_desktop.mcp.interact import ClientHooks

    hooks = ClientHooks(
        user=TerminalUserAgent(reader),
        sampler=ProviderSampler(lambda: rt.provider),
        roots=lambda: roots_of(rt.settings.tools.allowed_roots),
    )
    return McpManager(rt.registry, rt.secrets, connect_timeout=MCP_WAIT_S, log_dir=paths.logs, hooks=hooks)


async def _start_mcp(manager: Any, settings: Any) -> None:
    """Start the servers and wait until each is up or down (at most MCP_WAIT_S) before the first turn."""
    await manager.apply(settings.mcp_servers)
    await manager.wait_settled(MCP_WAIT_S)
    for name in manager.servers():
        status = manager.status(name)
        if status.state != "connected":
            print(f"[{status.text or status.message}]", file=sys.stderr)


async def _session(rt: Any, args: argparse.Namespace) -> str | None:
    """The conversation to use: None when --session names none, '' when it is busy in another process.

    Without --session the latest conversation continues, unless a turn of it runs in another process:
    then a new one starts (one writer per conversation) and a line on stderr says so.
    """
    if args.session:
        found = await rt.get_session(args.session)
        if found is None:
            return None
        return "" if await rt.history.busy_elsewhere(found.id) is not None else str(found.id)
    if not args.new:
        latest = await rt.history.latest_session()
        if latest is not None:
            if await rt.history.busy_elsewhere(latest.id) is None:
                return str(latest.id)
            print(tr("cli.chat.latest_busy", id=latest.id), file=sys.stderr)
    return str((await rt.create_session()).id)


async def _attachments(rt: Any, session_id: str, files: list[str]) -> list[Any] | int:
    """The files of ``--attach`` read (text extracted, images checked against the model); an exit code on failure."""
    if not files:
        return []
    from weclaw_desktop.agent.runtime_chats import ImagesRefused
    from weclaw_desktop.attachments import AttachmentError, prepare_all
    from weclaw_desktop.attachments.compose import size_text

    try:
        atts = await asyncio.to_thread(prepare_all, files, store_dir=rt.attachment_dir())
        await rt.check_attachments(session_id, atts)
    except (AttachmentError, ImagesRefused) as exc:
        return _fail(str(exc), 2)
    for a in atts:
        marks = [a.mime or a.kind, size_text(a.size)]
        if a.truncated:
            marks.append(tr("cli.chat.truncated"))
        print(tr("cli.chat.attached", name=a.name, what=", ".join(marks)), file=sys.stderr)
        if a.note:
            print(f"  ({a.note})", file=sys.stderr)
    return atts


async def _turn(
    rt: Any, session_id: str, text: str, printer: Printer, attachments: list[Any] | None = None
) -> ev.TurnDone:
    handle = rt.start_turn(session_id, text, on_event=printer.event, attachments=attachments or [])
    loop = asyncio.get_running_loop()
    installed = False
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # Windows: no signal handlers
        loop.add_signal_handler(signal.SIGINT, handle.cancel)
        loop.add_signal_handler(signal.SIGTERM, handle.cancel)
        installed = True
    try:
        done: ev.TurnDone = await handle.wait()
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)
            loop.remove_signal_handler(signal.SIGTERM)
    printer.finish()
    return done


def _report(done: ev.TurnDone, as_json: bool) -> int:
    code = EXIT.get(done.reason, 1)
    if code and not as_json:
        print(tr("cli.error", message=done.message or done.reason), file=sys.stderr)
    elif code and as_json:
        print(done.message or done.reason, file=sys.stderr)
    return code


async def _interactive(
    rt: Any, session_id: str, printer: Printer, reader: LineReader, as_json: bool, attachments: list[Any]
) -> int:
    if not as_json:
        print(tr("cli.chat.help"), file=sys.stderr)
    while True:
        line = await reader.readline("you> ")
        if line is None or line.strip() in ("/quit", "/exit"):
            return 0
        if not line.strip():
            continue
        if line.strip() == "/new":
            session_id = (await rt.create_session()).id
            print(tr("cli.chat.session", id=session_id), file=sys.stderr)
            continue
        done = await _turn(rt, session_id, line, printer, attachments)
        attachments = []  # --attach goes with the first message
        if done.reason != "completed":
            _report(done, as_json)


class Printer:
    def event(self, event: ev.Event) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        return None


class JsonPrinter(Printer):
    def __init__(self, out: TextIO) -> None:
        self.out = out

    def event(self, event: ev.Event) -> None:
        self.out.write(event.to_json() + "\n")
        self.out.flush()


class TextPrinter(Printer):
    """The answer as it streams on stdout, one line per tool call; the model's thinking dimmed on stderr (so a
    redirected stdout holds only the answer), unless hidden."""

    def __init__(self, out: TextIO, thoughts: TextIO | None = None, hide_reasoning: bool = False) -> None:
        self.out = out
        self.thoughts = thoughts or sys.stderr
        self.hide_reasoning = hide_reasoning
        self.at_line_start = True
        self._thinking = False  # a run of thinking text is open on self.thoughts
        tty = getattr(self.thoughts, "isatty", None)
        self._dim = bool(tty and tty()) and not os.environ.get("NO_COLOR")

    def _line(self, text: str) -> None:
        self._end_thinking()
        if not self.at_line_start:
            self.out.write("\n")
        self.out.write(text + "\n")
        self.at_line_start = True
        self.out.flush()

    def _think(self, text: str) -> None:
        if self.hide_reasoning or not text:
            return
        if not self._thinking:
            self._thinking = True
            if not self.at_line_start:
                self.out.write("\n")
                self.out.flush()
                self.at_line_start = True
        self.thoughts.write(f"\x1b[2m{text}\x1b[0m" if self._dim else text)
        self.thoughts.flush()

    def _end_thinking(self) -> None:
        if self._thinking:
            self._thinking = False
            self.thoughts.write("\n\n")
            self.thoughts.flush()

    def event(self, event: ev.Event) -> None:
        if isinstance(event, ev.ReasoningDelta):
            self._think(event.text)
        elif isinstance(event, ev.ReasoningRetracted):
            if not self.hide_reasoning:
                self._line("  " + tr("cli.chat.retracted"))
        elif isinstance(event, ev.ToolsWithheld):
            self._line("  ! " + tr("chat.tools_withheld", model=event.model))
        elif isinstance(event, ev.TextDelta):
            self._end_thinking()
            self.out.write(event.text)
            self.out.flush()
            self.at_line_start = event.text.endswith("\n")
        elif isinstance(event, ev.ToolCallStarted):
            self._line(f"  → {event.function} {_args(event.arguments)}")
        elif isinstance(event, ev.ToolCallAwaitingApproval):
            self._line(f"  ? {event.function} needs approval ({event.risk} risk)")
        elif isinstance(event, ev.ToolCallDenied):
            self._line(f"  ✗ denied by {event.decided_by}{': ' + event.reason if event.reason else ''}")
        elif isinstance(event, ev.ToolCallFinished):
            mark = "✓" if event.status is ToolStatus.SUCCESS else "✗"
            first = (event.output.strip().splitlines() or [""])[0]
            times = " · ".join(timing_parts(event.status, event.duration_ms, event.waited_ms))  # as the GUI says
            self._line(f"  {mark} {event.function} {event.status}{' ' + times if times else ''}  {first[:100]}")
            for path in event.files:
                self._line(f"    file: {path}")
        elif isinstance(event, ev.ErrorOccurred):
            self._line(f"  ! {event.message}")
        elif isinstance(event, ev.ImagesNotShown):
            self._line(f"  ! {tr('chat.images_not_shown', model=event.model, n=len(event.files))}")

    def finish(self) -> None:
        self._end_thinking()
        if not self.at_line_start:
            self.out.write("\n")
            self.at_line_start = True
        self.out.flush()


def _args(arguments: dict[str, Any]) -> str:
    text = json.dumps(arguments, ensure_ascii=False)
    return text if len(text) <= 120 else text[:119] + "…"
