"""Odd bytes never end a turn: file names that are not UTF-8, lone surrogates, arguments nested too deep.

One real ``weclaw chat`` process, two typed turns:

1. the model lists a folder holding ``报告.txt`` written in GBK bytes (an old zip on Linux): the name is
   listed with ``\\xNN`` escapes and a hint of what it says; the model passes the escaped name back and
   the file is opened; the answer holds a lone surrogate and an emoji whose surrogate halves arrive in
   two deltas: shown and stored with U+FFFD for the lone one, the emoji whole;
2. the next turn sends that history to the model without an encoding error, and a call with arguments
   nested 100,000 deep gets an "invalid arguments" result while its sibling runs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from chaos_support import AsciiFakeOpenAI, assert_clean_stderr, chat_env, rows, run_chat
from fakeopenai import Reply, call, text_reply, tool_reply

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or sys.getfilesystemencoding().lower() != "utf-8",
    reason="undecodable names exist on POSIX file systems with a UTF-8 file-system encoding",
)

ESCAPED = "\\xB1\\xA8\\xB8\\xE6.txt"  # 报告.txt in GBK, as shown to the model
DEEP = '{"a":' * 100_000 + "1" + "}" * 100_000


def _delta(content: str) -> dict[str, object]:
    return {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}]}


@pytest.fixture
async def fake() -> AsciiFakeOpenAI:
    server = AsciiFakeOpenAI()
    await server.start()
    yield server  # type: ignore[misc]
    await server.stop()


async def test_undecodable_names_surrogates_and_deep_arguments(fake, tmp_path: Path) -> None:
    """What must survive: the turn (no "Internal error"), the file opened by the name the model saw, the
    sibling call's result, and a history the next request can send."""
    user_home = tmp_path / "home"
    folder = user_home / "dir"
    folder.mkdir(parents=True)
    gbk = os.fsencode(folder) + b"/" + "报告".encode("gbk") + b".txt"
    fd = os.open(gbk, os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, "内容 from the old zip".encode())
    os.close(fd)
    home = tmp_path / "data"

    answer = Reply(
        chunks=[
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]},
            _delta("Read it \ud800 fine \ud83d"),
            _delta("\ude00 done."),
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
    )
    fake.push(
        tool_reply(call("file_list", {"path": "~/dir"}, id="l1")),
        tool_reply(call("file_read", {"path": f"~/dir/{ESCAPED}"}, id="r1")),
        answer,
        tool_reply(call("datetime_now", DEEP, id="d1"), call("datetime_now", {}, id="d2")),
        text_reply("second turn"),
    )
    code, out, err = await run_chat(fake, chat_env(home, user_home), "--new", stdin=b"look in dir\nand then?\n")
    assert code == 0, err
    assert_clean_stderr(err)
    assert "Internal error" not in out + err

    lines = out.splitlines()
    assert any(line.startswith("  ✓ file_list success") for line in lines)
    assert any(line.startswith("  ✓ file_read success") and ESCAPED in line for line in lines)
    assert any(line.startswith("  ✗ datetime_now error") and "nested more than 64 levels" in line for line in lines)
    assert any(line.startswith("  ✓ datetime_now success") for line in lines)
    assert "Read it \ufffd fine 😀 done." in out
    assert lines[-1] == "second turn"

    listing = rows(home, "SELECT output FROM tool_calls WHERE call_id='l1'")[0][0]
    assert ESCAPED in listing and "probably '报告.txt'" in listing
    read = rows(home, "SELECT status, output FROM tool_calls WHERE call_id='r1'")[0]
    assert read[0] == "success" and "内容 from the old zip" in read[1]
    assert rows(home, "SELECT call_id, status FROM tool_calls WHERE call_id IN ('d1','d2') ORDER BY call_id") == [
        ("d1", "error"),
        ("d2", "success"),
    ]
    assert rows(home, "SELECT content FROM messages WHERE role='assistant' AND content != ''") == [
        ("Read it \ufffd fine 😀 done.",),
        ("second turn",),
    ]
    # the second turn's request carried the first turn's history, cleaned
    assert {"role": "assistant", "content": "Read it \ufffd fine 😀 done."} in fake.messages(3)
    assert len(fake.requests) == 5
