"""The typed vocabulary of a call's end, where it is stored, and the rules around it.

What must hold: the audit stores each enum as its stable string (old rows are migrated, not lost), the
tool contract no longer drags the approval module in (no cycle), and no code decides anything by reading
the text of a message.
"""

from __future__ import annotations

import ast
import dataclasses
import sqlite3
from pathlib import Path

from weclaw_desktop.agent.audit_sink import SqliteAudit
from weclaw_desktop.storage.db import Database
from weclaw_desktop.toolkit import (
    ApprovalDecision,
    AuditRecord,
    DecidedBy,
    ErrorKind,
    Origin,
    Risk,
    ToolContext,
    ToolStatus,
)

PACKAGE = Path(__file__).resolve().parents[2] / "weclaw_desktop"

V1 = """
CREATE TABLE schema_version (component TEXT PRIMARY KEY, version INTEGER NOT NULL);
INSERT INTO schema_version VALUES ('audit', 1);
CREATE TABLE audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT, trace_id TEXT NOT NULL, run_id TEXT NOT NULL, session_id TEXT NOT NULL,
    call_id TEXT NOT NULL, tool TEXT NOT NULL, action TEXT NOT NULL, function TEXT NOT NULL, origin TEXT NOT NULL,
    started_at REAL NOT NULL, duration_ms REAL NOT NULL, status TEXT NOT NULL, result_len INTEGER NOT NULL,
    error_summary TEXT NOT NULL DEFAULT '', approval TEXT NOT NULL DEFAULT '', decided_by TEXT NOT NULL DEFAULT ''
);
INSERT INTO audit(trace_id, run_id, session_id, call_id, tool, action, function, origin, started_at, duration_ms,
    status, result_len, error_summary, approval, decided_by)
VALUES ('t', 'r', 's', 'c1', 'echo', 'say', 'echo_say', 'gui', 1.0, 2.0, 'denied', 5, 'no', 'deny', 'hook:guard'),
       ('t', 'r', 's', 'c2', '', '', 'nope', 'cli', 1.0, 2.0, 'error', 5, 'unknown', '', '');
"""


async def test_old_audit_rows_are_migrated_and_read_as_types(tmp_path: Path) -> None:
    path = tmp_path / "weclaw.db"
    conn = sqlite3.connect(path)
    conn.executescript(V1)
    conn.close()
    db = Database(path)
    audit = SqliteAudit(db)
    old = await audit.records(session_id="s")
    assert [(r.decided_by, r.hook, r.approval, r.error_kind, r.risk) for r in old] == [
        (DecidedBy.HOOK, "guard", ApprovalDecision.DENY, None, None),
        (None, "", None, None, None),
    ]
    rec = AuditRecord(
        trace_id="t2", run_id="r", session_id="s", call_id="c3", tool="echo", action="shout", function="echo_shout",
        origin=Origin.GUI, started_at=3.0, duration_ms=1.0, status=ToolStatus.DENIED, result_len=1,
        approval=ApprovalDecision.DENY, decided_by=DecidedBy.EXPOSURE, error_kind=ErrorKind.NOT_OFFERED, risk=Risk.HIGH,
    )  # fmt: skip
    await audit.record(rec)
    assert (await audit.records(session_id="s"))[-1] == rec
    raw = db.query("SELECT status, approval, decided_by, error_kind, risk, hook, origin FROM audit WHERE call_id='c3'")
    assert tuple(raw[0]) == ("denied", "deny", "exposure", "not-offered", "high", "", "gui")  # stable strings
    db.close()


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
    }


def test_the_tool_contract_does_not_import_the_approval_module() -> None:
    """toolkit/base.py and toolkit/approval.py used to import each other (through ToolContext.approval, also
    under TYPE_CHECKING); the gate is now an argument of dispatch(), so the contract knows nothing of it."""
    toolkit = PACKAGE / "toolkit"
    for low in ("base.py", "outcome.py"):
        assert not any(m.endswith(("approval", "dispatcher")) for m in _imports(toolkit / low)), low
    assert "approval" not in {f.name for f in dataclasses.fields(ToolContext)}


TEXT_ATTRS = {"output", "error", "note", "reason", "message"}


def _reads_text(node: ast.AST) -> bool:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("startswith", "endswith")
    ):
        return isinstance(node.func.value, ast.Attribute) and node.func.value.attr in TEXT_ATTRS
    if isinstance(node, ast.Compare) and any(isinstance(op, ast.In | ast.NotIn) for op in node.ops):
        literal = isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)
        return literal and any(isinstance(c, ast.Attribute) and c.attr in TEXT_ATTRS for c in node.comparators)
    return False


def test_no_code_decides_by_reading_a_message() -> None:
    """Who denied a call, whether it failed and why are typed fields; nothing matches the text meant for people
    or the model (the loop once guessed the decider from "The approval policy ..." in the output)."""
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {ast.unparse(node)}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if _reads_text(node)
    ]
    assert found == []
