"""Branches of a conversation: edits and regenerations kept as siblings, and the path the user is on.

A conversation is a tree of turns (a turn = one user message and everything the assistant did for it). A new
message follows the end of the active path. Editing a user message makes a new turn beside it (same parent,
kind ``edit``); regenerating an answer does the same with the same text (kind ``regenerate``); Retry after an
error is a regeneration that replaces the failed attempt when that attempt produced nothing. The *active path*
starts at the root and follows, at every turn, the child the user chose last (``branch_choice``) or else the
newest one. Only the active path is shown when a chat is opened and only it is sent to the model.

For display each turn on the path has a :class:`BranchInfo`: the user message pages through the distinct texts
among its siblings ("< 2/3 >": edits), the answer through the siblings with the same text (regenerations).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from weclaw_desktop.storage.db import Database

BranchKind = Literal["new", "edit", "regenerate", "retry", "import"]


@dataclass(frozen=True)
class TurnNode:
    run_id: str
    parent: str  # '' = the first turn
    kind: str
    started_at: float
    text: str  # the user's message of the turn


@dataclass(frozen=True)
class BranchInfo:
    """Where one turn of the active path sits among its siblings (1-based positions, for "< i/n >")."""

    run_id: str
    edit_index: int = 1
    edit_count: int = 1
    answer_index: int = 1
    answer_count: int = 1
    edit_runs: tuple[str, ...] = ()  # the run to select for each edit position
    answer_runs: tuple[str, ...] = ()  # the runs of the answer pager (same text)

    def edit_target(self, step: int) -> str | None:
        """The run to select for the previous (-1) / next (+1) edit; None at either end."""
        i = self.edit_index - 1 + step
        return self.edit_runs[i] if 0 <= i < len(self.edit_runs) else None

    def answer_target(self, step: int) -> str | None:
        i = self.answer_index - 1 + step
        return self.answer_runs[i] if 0 <= i < len(self.answer_runs) else None


@dataclass
class Tree:
    nodes: dict[str, TurnNode]
    children: dict[str, list[str]]  # parent -> runs, oldest first
    choices: dict[str, str] = field(default_factory=dict)

    def active_path(self) -> list[str]:
        path: list[str] = []
        node = ""
        seen: set[str] = set()
        while self.children.get(node):
            kids = self.children[node]
            chosen = self.choices.get(node)
            pick = chosen if chosen in kids else kids[-1]
            if pick in seen:  # a damaged tree (a cycle) never hangs the app
                break
            seen.add(pick)
            path.append(pick)
            node = pick
        return path

    def leaf(self) -> str:
        path = self.active_path()
        return path[-1] if path else ""

    def info(self, run_id: str) -> BranchInfo:
        node = self.nodes[run_id]
        siblings = self.children.get(node.parent, [run_id])
        texts = list(dict.fromkeys(self.nodes[s].text for s in siblings))
        same = [s for s in siblings if self.nodes[s].text == node.text]
        # each edit position selects the run of that text the user was on last (else its newest)
        chosen_here = self.choices.get(node.parent)
        edit_runs = []
        for text in texts:
            runs = [s for s in siblings if self.nodes[s].text == text]
            edit_runs.append(run_id if text == node.text else (chosen_here if chosen_here in runs else runs[-1]))
        return BranchInfo(
            run_id=run_id,
            edit_index=texts.index(node.text) + 1,
            edit_count=len(texts),
            answer_index=same.index(run_id) + 1,
            answer_count=len(same),
            edit_runs=tuple(edit_runs),
            answer_runs=tuple(same),
        )


class Branches:
    """Reads and changes the turn tree of the ``history.conversation`` tables (synchronous parts run in a
    worker thread through ``Database.run``)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # --- reading ------------------------------------------------------------------------------------
    def tree_sync(self, session_id: str) -> Tree:
        db = self.db
        rows = db.query(
            "SELECT t.run_id, t.started_at, tt.parent_run, tt.kind FROM turns t "
            "LEFT JOIN turn_tree tt ON tt.run_id = t.run_id WHERE t.session_id=? ORDER BY t.started_at, t.run_id",
            (session_id,),
        )
        # each turn's user message: one pass over the session's messages (SQLite's MIN() picks that row's content)
        texts = {
            r["run_id"]: r["content"]
            for r in db.query(
                "SELECT run_id, content, MIN(id) FROM messages WHERE session_id=? AND role='user' GROUP BY run_id",
                (session_id,),
            )
        }
        nodes: dict[str, TurnNode] = {}
        previous = ""
        for r in rows:
            # a turn without a tree row (made before branches, or by a writer that knows none) follows the one
            # started before it
            parent = r["parent_run"] if r["parent_run"] is not None else previous
            text = texts.get(r["run_id"]) or ""
            nodes[r["run_id"]] = TurnNode(r["run_id"], parent, r["kind"] or "new", r["started_at"], text)
            previous = r["run_id"]
        children: dict[str, list[str]] = {}
        for node in nodes.values():
            parent = node.parent if node.parent in nodes else ""
            children.setdefault(parent, []).append(node.run_id)
        choices = {
            r["parent_run"]: r["run_id"]
            for r in db.query("SELECT parent_run, run_id FROM branch_choice WHERE session_id=?", (session_id,))
        }
        return Tree(nodes, children, choices)

    async def tree(self, session_id: str) -> Tree:
        return await self.db.run(self.tree_sync, session_id)

    async def active_runs(self, session_id: str) -> list[str]:
        return (await self.tree(session_id)).active_path()

    async def leaf(self, session_id: str) -> str:
        """The last turn of the active path ('' for an empty chat): where a new message goes."""
        return (await self.tree(session_id)).leaf()

    async def infos(self, session_id: str) -> dict[str, BranchInfo]:
        tree = await self.tree(session_id)
        return {run: tree.info(run) for run in tree.active_path()}

    @staticmethod
    def on_path(messages: Sequence[Any], tree: Tree) -> list[Any]:
        """``messages`` (rows or objects with a ``run_id``) without those of turns off the active path; rows of no
        turn (an empty or unknown run id) are kept."""
        keep = set(tree.active_path())

        def run_of(m: Any) -> str:
            return str(m["run_id"] if not hasattr(m, "run_id") else m.run_id)

        return [m for m in messages if run_of(m) not in tree.nodes or run_of(m) in keep]

    # --- writing ------------------------------------------------------------------------------------
    async def record(self, session_id: str, run_id: str, *, parent: str, kind: BranchKind) -> None:
        """Before a turn starts: it follows ``parent`` and becomes the chosen sibling there."""
        await self.db.run(self._record, session_id, run_id, parent, kind)

    def _record(self, session_id: str, run_id: str, parent: str, kind: str) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO turn_tree(run_id, session_id, parent_run, kind, created_at) VALUES(?,?,?,?,?)",
                (run_id, session_id, parent, kind, time.time()),
            )
            _choose(conn, session_id, parent, run_id)

    async def select(self, session_id: str, run_id: str) -> bool:
        """Make ``run_id`` the chosen sibling at its parent (paging "< >"). False when it is not in the chat."""
        return bool(await self.db.run(self._select, session_id, run_id))

    def _select(self, session_id: str, run_id: str) -> bool:
        tree = self.tree_sync(session_id)
        node = tree.nodes.get(run_id)
        if node is None:
            return False
        with self.db.transaction() as conn:
            # every turn above it must lead to it too: choose the whole chain up to the root
            while node is not None:
                _choose(conn, session_id, node.parent if node.parent in tree.nodes else "", node.run_id)
                node = tree.nodes.get(node.parent)
        return True

    async def parent_of(self, session_id: str, run_id: str) -> str | None:
        tree = await self.tree(session_id)
        node = tree.nodes.get(run_id)
        return None if node is None else (node.parent if node.parent in tree.nodes else "")

    async def delete_turn(self, session_id: str, run_id: str) -> bool:
        """Remove a turn (its user message, answer, tool calls, attachments, usage); its children follow its
        parent from now on, so the rest of the conversation stays."""
        return bool(await self.db.run(self._delete_turn, session_id, run_id))

    def _delete_turn(self, session_id: str, run_id: str) -> bool:
        tree = self.tree_sync(session_id)
        node = tree.nodes.get(run_id)
        if node is None:
            return False
        parent = node.parent if node.parent in tree.nodes else ""
        with self.db.transaction() as conn:
            for kid in tree.children.get(run_id, []):
                conn.execute(
                    "INSERT OR REPLACE INTO turn_tree(run_id, session_id, parent_run, kind, created_at) "
                    "VALUES(?,?,?,COALESCE((SELECT kind FROM turn_tree WHERE run_id=?), 'new'),?)",
                    (kid, session_id, parent, kid, tree.nodes[kid].started_at),
                )
            chosen_below = tree.choices.get(run_id)
            for table in ("messages", "tool_calls", "attachments", "usage", "turn_tree", "turns"):
                conn.execute(f"DELETE FROM {table} WHERE session_id=? AND run_id=?", (session_id, run_id))
            conn.execute("DELETE FROM branch_choice WHERE session_id=? AND parent_run=?", (session_id, run_id))
            current = tree.choices.get(parent)
            if current == run_id or current is None:
                conn.execute("DELETE FROM branch_choice WHERE session_id=? AND parent_run=?", (session_id, parent))
                if chosen_below or tree.children.get(run_id):
                    _choose(conn, session_id, parent, chosen_below or tree.children[run_id][-1])
            conn.execute("UPDATE sessions SET updated_at=? WHERE id=?", (time.time(), session_id))
        return True

    async def delete_answer(self, session_id: str, run_id: str) -> bool:
        """Remove the assistant's part of a turn (answer, tool calls, usage), keeping the user's message."""
        return bool(await self.db.run(self._delete_answer, session_id, run_id))

    def _delete_answer(self, session_id: str, run_id: str) -> int:
        with self.db.transaction() as conn:
            n = conn.execute(
                "DELETE FROM messages WHERE session_id=? AND run_id=? AND role != 'user'", (session_id, run_id)
            ).rowcount
            conn.execute("DELETE FROM tool_calls WHERE session_id=? AND run_id=?", (session_id, run_id))
            conn.execute("DELETE FROM usage WHERE session_id=? AND run_id=?", (session_id, run_id))
            return int(n)


def _choose(conn: Any, session_id: str, parent: str, run_id: str) -> None:
    conn.execute(
        "INSERT INTO branch_choice(session_id, parent_run, run_id) VALUES(?,?,?) "
        "ON CONFLICT(session_id, parent_run) DO UPDATE SET run_id=excluded.run_id",
        (session_id, parent, run_id),
    )
