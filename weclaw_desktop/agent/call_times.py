"""How long a tool call took, said the same way wherever it is shown (the chat's cards live and reopened, the
Calls tab, ``weclaw chat``, the Markdown export): its running time apart from the time it waited for the user's
approval — "4.0 s · waited 44.8 s for approval", in the UI language.

The stored facts of a call are ``duration_ms`` (the dispatcher's whole time, the approval wait included) and
``waited_ms`` (the part of it spent waiting at the approval gate; None when not known: a call stored before
waits were recorded, or one the loop closed without the dispatcher's timing). The running time is the whole
minus the wait; with the wait not known it is the whole, as it was shown before. A denied call never ran, so
it has no running time and no wait is mentioned; a wait under :data:`WAIT_SHOWN_S` is not worth a mention.
"""

from __future__ import annotations

from weclaw_desktop.i18n import tr

#: Approval waits shorter than this are not worth a mention.
WAIT_SHOWN_S = 0.5

#: Statuses that have no running time to show (a denied call never ran; an interrupted one has no end).
NO_RUNNING_TIME = frozenset({"denied", "interrupted"})


def format_seconds(seconds: float) -> str:
    """A duration with its unit in the UI language: "75 ms" / "75 毫秒", "3.7 s" / "3.7 秒", "2:05"."""
    if seconds < 1:
        return tr("unit.ms", n=round(seconds * 1000))
    if seconds < 60:
        return tr("unit.s", n=round(seconds, 1))
    return f"{int(seconds // 60)}:{int(seconds % 60):02d}"


def running_ms(duration_ms: float, waited_ms: float | None) -> float:
    """The call's own running time: its whole time minus the approval wait (the whole when the wait is not known)."""
    return max(0.0, duration_ms - (waited_ms or 0.0))


def wait_text(waited_s: float) -> str:
    """ "waited 44.8 s for approval" / "等待批准 44.8 秒"."""
    return tr("card.waited", time=format_seconds(waited_s))


def timing_parts(status: str, duration_ms: float | None, waited_ms: float | None) -> list[str]:
    """What to say about a finished call's time: ``["4.0 s", "waited 44.8 s for approval"]``, ``["75 ms"]``
    (no wait worth a mention, or none known), ``[]`` for a denied call. ``duration_ms`` None: no time known."""
    if status == "denied":
        return []
    parts = []
    if duration_ms is not None and status not in NO_RUNNING_TIME:
        parts.append(format_seconds(running_ms(duration_ms, waited_ms) / 1000))
    if waited_ms is not None and waited_ms / 1000 >= WAIT_SHOWN_S:
        parts.append(wait_text(waited_ms / 1000))
    return parts
