"""Markdown and HTML of a chat's active branch, for reading and sharing (JSON is the format to import).

Headings follow the language of the app (the CLI: the terminal's). Tool calls become readable blocks: the function, how it ended and how long it ran (apart from the wait for
approval, ``agent/call_times.py``), the arguments as JSON and
the start of the result. Fences are made longer than any run of backticks inside, so code in a message or a
tool's output can never break out of its block. The HTML is one self-contained file: inline CSS, images
embedded as data URLs, no script, and the messages' own HTML escaped (markdown-it with ``html`` off).
"""

from __future__ import annotations

import base64
import html
import json
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from weclaw_desktop.agent.call_times import timing_parts
from weclaw_desktop.attachments.compose import size_text
from weclaw_desktop.attachments.prepare import sniff_image
from weclaw_desktop.i18n import tr

if TYPE_CHECKING:
    from weclaw_desktop.agent.history import HistoryStore, StoredToolCall

RESULT_CHARS = 2_000
_ROLE = {"user": "export.you", "assistant": "export.assistant"}


def _stamp(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at)) if at else ""


def fence(text: str, info: str = "") -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text.rstrip()}\n{ticks}"


def _tool_block(call: dict[str, Any], record: StoredToolCall | None) -> str:
    fn = call.get("function", {}).get("name") or (record.function if record else "?")
    raw = call.get("function", {}).get("arguments") or ""
    try:
        args = json.dumps(json.loads(raw), ensure_ascii=False, indent=2) if raw else "{}"
    except ValueError:
        args = raw
    head = f"**{tr('export.tool_call')}** `{fn}`"
    if record is not None:
        head += " — " + ", ".join([record.status, *timing_parts(record.status, record.duration_ms, record.waited_ms)])
    lines = [head, "", fence(args, "json")]
    if record is not None:
        output = record.output
        cut = len(output) > RESULT_CHARS
        lines += [
            "",
            tr("export.result") if record.status == "success" else tr("export.result_status", status=record.status),
        ]
        lines.append(fence(output[:RESULT_CHARS] + ("\n…" if cut else "")))
        lines += [f"- file: `{f}`" for f in record.files]
    return "\n".join("> " + ln if ln else ">" for ln in "\n".join(lines).splitlines())


async def _gather(history: HistoryStore, session_id: str) -> tuple[Any, list[Any], dict[str, Any], dict[str, Any]]:
    info = await history.get_session(session_id)
    if info is None:
        raise KeyError(f"no conversation {session_id}")
    messages = await history.messages(session_id)
    calls = {c.call_id: c for c in await history.tool_calls(session_id)}
    runs = [m.run_id for m in messages if m.role == "user"]
    attachments = await history.attachments.by_run(session_id, runs)
    return info, messages, calls, attachments


async def export_markdown(history: HistoryStore, session_id: str) -> str:
    info, messages, calls, attachments = await _gather(history, session_id)
    setup = await history.chats.get(session_id)
    out = [f"# {info.title or tr('export.untitled')}", ""]
    meta = [tr("export.exported", when=_stamp(time.time()))]
    if setup.model or info.model:
        meta.append(tr("export.model", model=setup.model or info.model))
    out += [f"*{' · '.join(meta)}*", ""]
    for m in messages:
        if m.role == "tool":
            continue
        if m.role == "assistant" and not m.content and not m.tool_calls:
            continue
        if m.role == "user" or m.content:
            out += [f"## {tr(_ROLE[m.role])} · {_stamp(m.created_at)}", ""]
        if m.content:
            out += [m.content.rstrip(), ""]
        if m.status in ("partial", "cancelled"):
            out += [f"*({tr('export.stopped' if m.status == 'cancelled' else 'export.cut')})*", ""]
        for att in attachments.get(m.run_id, []) if m.role == "user" else []:
            mark = f", {tr('attach.truncated')}" if att.truncated else ""
            out += [f"📎 {att.name} ({att.mime or att.kind}, {size_text(att.size)}{mark})", ""]
        for c in m.tool_calls:
            out += [_tool_block(c, calls.get(c.get("id", ""))), ""]
    return "\n".join(out).rstrip() + "\n"


_CSS = """
body{font:15px/1.55 -apple-system,"Segoe UI","Noto Sans","PingFang SC","Microsoft YaHei",sans-serif;
max-width:820px;margin:2em auto;padding:0 1em;color:#1f2328;background:#fff}
h1{font-size:1.6em} h2{font-size:1em;color:#57606a;border-top:1px solid #d0d7de;padding-top:1em;margin-top:1.6em}
pre{background:#f6f8fa;padding:.8em;overflow:auto;border-radius:6px} code{font-family:ui-monospace,Menlo,Consolas,monospace}
blockquote{margin:0;padding:.2em 1em;border-left:4px solid #8250df;background:#faf7ff}
img.att{max-width:100%;border:1px solid #d0d7de;border-radius:6px} .meta{color:#57606a}
table{border-collapse:collapse} td,th{border:1px solid #d0d7de;padding:4px 8px}
@media (prefers-color-scheme:dark){body{background:#0d1117;color:#e6edf3}pre{background:#161b22}
blockquote{background:#1c1630}h2,.meta{color:#8d96a0}}
"""


def _data_url(path: str) -> str:
    try:
        data = Path(path).read_bytes()
    except OSError:
        return ""
    mime = sniff_image(data[:16])
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}" if mime else ""


async def export_html(history: HistoryStore, session_id: str) -> str:
    from markdown_it import MarkdownIt

    text = await export_markdown(history, session_id)
    _info, messages, _calls, attachments = await _gather(history, session_id)
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    body = md.render(text)
    # images of the user's messages, embedded after the body's attachment lines
    for m in messages:
        for att in attachments.get(m.run_id, []) if m.role == "user" else []:
            if att.kind != "image":
                continue
            url = _data_url(att.path)
            if not url:
                continue
            label = html.escape(f"📎 {att.name}")
            tag = f'<img class="att" alt="{html.escape(att.name)}" src="{url}">'
            body = body.replace(f"<p>{label} (", f"{tag}\n<p>{label} (", 1)
    title = html.escape(_info.title or tr("export.untitled"))
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{_CSS}</style></head>\n<body>\n{body}</body></html>\n"
    )
