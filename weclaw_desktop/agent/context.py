"""The conversation as the model receives it at the start of a turn: the active branch only, each user message
with the text of its attachments, and images as ``image_url`` parts for a model that sees them.

Images are expensive (hundreds of tokens each) and a chat can hold many, so only the newest ``max_images`` are
sent as pixels; older ones are named in a line. Images a tool produced (the ``screen`` tool's screenshot, an MCP
tool's picture) go in a user message right after that round's tool results, since tool messages carry text
only; the loop does the same within a turn (:func:`tool_image_message`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from weclaw_desktop.attachments.compose import ImageRef, images_of, tool_images, user_text, with_images

if TYPE_CHECKING:
    from weclaw_desktop.agent.history import HistoryStore

MAX_IMAGES = 4


def tool_image_message(
    results: Sequence[tuple[str, Sequence[str]]], *, show: bool, model: str = ""
) -> dict[str, Any] | None:
    """A user message carrying the images of one round's tool results ``[(function, files), ...]``, or None."""
    images: list[ImageRef] = []
    names: list[str] = []
    for function, files in results:
        found = tool_images(files)
        images += found
        names += [f"{i.name} (from {function})" for i in found]
    if not images:
        return None
    text = "Images returned by the tool calls above: " + ", ".join(names)
    return {"role": "user", "content": with_images(text, images, show=show, model=model)}


async def model_messages(
    history: HistoryStore,
    session_id: str,
    *,
    max_chars: int,
    vision: bool | None,
    model: str = "",
    max_images: int = MAX_IMAGES,
) -> list[dict[str, Any]]:
    from weclaw_desktop.agent.history import build_model_messages

    stored = await history.messages(session_id)  # the active branch
    user_runs = [m.run_id for m in stored if m.role == "user"]
    attachments = await history.attachments.by_run(session_id, user_runs) if user_runs else {}
    images_by_run: dict[str, list[ImageRef]] = {}
    expanded = []
    for m in stored:
        atts = attachments.get(m.run_id) if m.role == "user" else None
        if atts:
            images_by_run[m.run_id] = images_of(atts)
            m = dataclasses.replace(m, content=user_text(m.content, atts))
        expanded.append(m)
    out = build_model_messages(expanded, max_chars=max_chars)
    files = {c.call_id: (c.function, c.files) for c in await history.tool_calls(session_id) if c.files}

    # which stored user message each user message of ``out`` is (trimming drops whole turns from the front)
    users = [m.run_id for m in expanded if m.role == "user"]
    slots = [i for i, msg in enumerate(out) if msg["role"] == "user"]
    offset = len(users) - len(slots)
    plan: list[tuple[int, str, list[ImageRef]]] = []  # (index in out, kind, images), oldest first
    for k, i in enumerate(slots):
        refs = images_by_run.get(users[offset + k], [])
        if refs:
            plan.append((i, "user", refs))
    group: list[tuple[str, Sequence[str]]] = []
    for i, msg in enumerate(out):
        if msg["role"] == "tool" and msg.get("tool_call_id") in files:
            group.append(files[msg["tool_call_id"]])
        nxt = out[i + 1] if i + 1 < len(out) else None
        if group and (nxt is None or nxt["role"] != "tool"):
            refs = [r for _fn, fs in group for r in tool_images(fs)]
            if refs:
                plan.append((i, "tool", refs))
            group = []

    # the newest max_images images go as pixels; older ones are named only
    budget = max_images
    shown: dict[int, list[ImageRef]] = {}
    older: dict[int, list[ImageRef]] = {}
    for i, _kind, refs in sorted(plan, key=lambda p: p[0], reverse=True):
        keep = refs[-budget:] if budget > 0 else []
        budget -= len(keep)
        shown[i] = keep
        older[i] = [r for r in refs if r not in keep]
    result: list[dict[str, Any]] = []
    for i, msg in enumerate(out):
        kind = next((k for j, k, _ in plan if j == i), None)
        if kind == "user":
            note = _older_note(str(msg["content"]), older[i])
            result.append({**msg, "content": with_images(note, shown[i], show=vision is not False, model=model)})
            continue
        result.append(msg)
        if kind == "tool":
            names = ", ".join(r.name for r in [*older[i], *shown[i]])
            text = _older_note(f"Images returned by the tool calls above: {names}", older[i])
            result.append(
                {"role": "user", "content": with_images(text, shown[i], show=vision is not False, model=model)}
            )
    return result


def _older_note(text: str, older: list[ImageRef]) -> str:
    if not older:
        return text
    names = ", ".join(r.name for r in older)
    return f"{text}\n\n[Earlier image(s) not repeated to save tokens: {names}.]"
