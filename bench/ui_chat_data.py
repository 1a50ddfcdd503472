"""Realistic stored chats and long answers for bench/ui.py: Markdown with headings, lists, tables, code
and links, tool calls with their results and files, written through the real history store."""

from __future__ import annotations

import json
from typing import Any

ANSWERS = [
    "## Summary\n\nThe report has **three** parts. See https://example.com/docs for details.\n\n"
    "- first point with `inline code`\n- second point\n  - a sub point\n  - another\n- third point\n\n"
    "| name | size | changed |\n|---|---:|---|\n| a.txt | 12 KB | today |\n| b.csv | 3 MB | yesterday |\n"
    "| c.md | 800 B | last week |\n\nThat is all for now.",
    "Here is the script:\n\n```python\nimport csv\nfrom pathlib import Path\n\n\ndef total(path: Path) -> float:\n"
    "    with path.open() as f:\n        return sum(float(r['amount']) for r in csv.DictReader(f))\n\n\n"
    "print(total(Path('budget.csv')))\n```\n\nRun it with `python total.py`; it prints the sum.",
    "好的，我已经整理了文件夹。\n\n1. 图片移到了 **Pictures**\n2. 文档移到了 **Documents**\n3. 其余文件保持不变\n\n"
    "> 注意：隐藏文件没有移动。\n\n如果需要撤销，请告诉我。",
    "A short answer with a [link](https://example.org) and some *emphasis*.",
    "### Steps\n\n1. Open the settings\n2. Choose **Tools**\n3. Enter the SMTP server\n\n```bash\n"
    "weclaw doctor\nweclaw tools --json | jq '.[] | .name'\n```\n\nThen try again.",
]
QUESTIONS = [
    "Summarise the report in my Downloads folder",
    "Write a script that adds up the amounts in budget.csv",
    "帮我整理一下桌面上的文件",
    "What is the capital of France?",
    "How do I set up e-mail?",
]


def plan(n_messages: int) -> list[dict[str, Any]]:
    """Turns adding up to about ``n_messages`` stored rows: every other turn calls a tool (assistant with
    the call, the tool result, the final answer), the others answer directly."""
    turns: list[dict[str, Any]] = []
    count = 0
    i = 0
    while count < n_messages:
        with_tool = i % 2 == 1
        turns.append({"q": QUESTIONS[i % len(QUESTIONS)], "a": ANSWERS[i % len(ANSWERS)], "tool": with_tool, "i": i})
        count += 4 if with_tool else 2
        i += 1
    return turns


async def seed(history: Any, session_id: str, n_messages: int) -> int:
    """Write the chat through the history store's public API; returns the rows written."""
    rows = 0
    for t in plan(n_messages):
        run_id = f"r{session_id[:6]}{t['i']:05d}"
        await history.begin_turn(session_id, run_id, t["q"])
        rows += 1
        if t["tool"]:
            call_id = f"c{t['i']}"
            args = json.dumps({"n": t["i"]})
            calls = [{"id": call_id, "type": "function", "function": {"name": "block_quick", "arguments": args}}]
            await history.add_assistant(session_id, run_id, 1, "", calls)
            files = [f"/tmp/gui/bench-out/report-{t['i']}.csv"] if t["i"] % 4 == 1 else []
            output = f"quick {t['i']}\n" + "\n".join(f"line {k}: value {k * t['i']}" for k in range(6))
            await history.add_tool_result(
                session_id,
                run_id,
                1,
                call_id=call_id,
                function="block_quick",
                tool="block",
                action="quick",
                arguments=args,
                status="success" if t["i"] % 10 != 3 else "error",
                output=output,
                error="" if t["i"] % 10 != 3 else "the file was locked",
                files=files,
                duration_ms=42.0,
            )
            rows += 2
            await history.add_assistant(session_id, run_id, 2, t["a"], [])
        else:
            await history.add_assistant(session_id, run_id, 1, t["a"], [])
        rows += 1
        await history.finish_turn(run_id, "completed", 2 if t["tool"] else 1)
    return rows


def answer_tokens(chars: int) -> list[str]:
    """A long Markdown answer as ~6-character tokens: paragraphs, a list and a code block now and then."""
    out: list[str] = []
    total = 0
    i = 0
    while total < chars:
        if i % 400 == 200:
            piece = "\n\n```python\nfor i in range(10):\n    print(i * i)\n```\n\n"
        elif i % 300 == 150:
            piece = "\n\n- item one\n- item two\n  - nested\n\n"
        elif i % 40 == 39:
            piece = f"w{i % 97}.\n\n"
        else:
            piece = f"word{i % 89} "
        out.append(piece)
        total += len(piece)
        i += 1
    return out
