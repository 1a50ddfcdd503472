"""A stored chat as the chat view's items: what was shown, as it was (#17 item 1).

``agent/transcript.py`` reads the history into display entries (messages, tool calls, the ends of turns);
this turns them into items: messages with their status and thinking, a card per call with its status, result,
files and its running time apart from the approval wait, and a notice for each turn that did not simply
complete (stopped, failed, hit a limit, was interrupted, still runs elsewhere).
"""

from __future__ import annotations

from collections.abc import Iterable

from weclaw_desktop.agent.transcript import ShownCall, ShownMessage, Transcript, TurnEnd
from weclaw_desktop.i18n import Text
from weclaw_desktop.ui.chat.items import CallItem, ChatItem, MessageItem, NoticeItem
from weclaw_desktop.ui.tool_board import CallInfo

#: How a turn that did not simply complete is marked in a restored chat.
TURN_MARKS = {
    "cancelled": ("chat.stopped", "warning"),
    "max_rounds": ("chat.done.max_rounds", "warning"),
    "loop_guard": ("chat.done.loop_guard", "warning"),
    "interrupted": ("chat.interrupted", "warning"),
    "running": ("chat.running_elsewhere", "info"),
}


def transcript_items(
    transcript: Transcript, running_here: Iterable[str] = ()
) -> tuple[list[ChatItem], dict[str, CallItem]]:
    """The items of a stored chat, and its cards by call id. A turn running in this window (``running_here``)
    gets no "running elsewhere" mark: its live events follow."""
    here = set(running_here)
    items: list[ChatItem] = []
    calls: dict[str, CallItem] = {}
    for entry in transcript.entries:
        if isinstance(entry, ShownMessage):
            items.append(
                MessageItem.of(
                    entry.role,
                    entry.text,
                    status=entry.status,
                    created_at=entry.created_at,
                    message_id=entry.id,
                    run_id=entry.run_id,
                    reasoning=entry.reasoning,
                    reasoning_ms=entry.reasoning_ms,
                )
            )
        elif isinstance(entry, ShownCall):
            item = CallItem(call=call_info(entry))
            calls[entry.call_id] = item
            items.append(item)
        elif isinstance(entry, TurnEnd):
            if entry.status == "running" and entry.run_id in here:
                continue  # its live events follow
            notice = turn_notice(entry)
            if notice is not None:
                items.append(notice)
    return items, calls


def call_info(entry: ShownCall) -> CallInfo:
    """A stored call as the card's record."""
    call = CallInfo(
        entry.call_id,
        entry.function,
        entry.tool,
        entry.action,
        arguments=entry.arguments,
        status=entry.status,
        duration_ms=entry.duration_ms or None,
        output=entry.output,
        error=entry.error,
        files=list(entry.files),
        error_kind=entry.error_kind,
        decided_by=entry.decided_by,
        truncated=entry.truncated,
        restored=True,
        at=entry.created_at,
    )
    call.set_times(entry.duration_ms or None, entry.waited_ms)  # running time apart from the approval wait
    return call


def turn_notice(entry: TurnEnd) -> NoticeItem | None:
    """The mark of a turn that did not simply complete; None for one that did."""
    if entry.status in ("error", "budget"):
        if not entry.message:
            return None
        return NoticeItem(message=Text("chat.error", message=entry.message), kind="error")
    mark = TURN_MARKS.get(entry.status)
    if mark is None:
        return None
    return NoticeItem(message=Text(mark[0]), kind=mark[1])
