"""Follow-ups through the real loop: the engine gets the stored conversation (earlier user text, the
assistant's answers, the tools each turn called), so what is offered in a turn depends on what came before.

The real loop, the real tools.json with progressive routing, a real SQLite history and the fake OpenAI
server. What must survive: "run it" after the assistant wrote Python offers the Python runner (main
offered nothing: the code was text, not a tool call); "thanks" after a tool turn offers nothing but
tool_search (main re-offered the last turn's tools); a bare follow-up gets the earlier turn's tools.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_support import make_settings, run_turn
from fakeopenai import FakeOpenAI, call, text_reply, tool_reply

from weclaw_desktop.paths import tools_json_path
from weclaw_desktop.toolkit.approval import AutoApprove


async def progressive(make_runtime: Any, fake_openai: FakeOpenAI) -> Any:
    settings = make_settings(fake_openai, exposure="progressive")
    return await make_runtime(settings, tools_json=Path(tools_json_path()), gate=AutoApprove())


async def test_run_it_after_code_the_assistant_wrote_offers_the_python_runner(
    make_runtime: Any, fake_openai: FakeOpenAI
) -> None:
    rt = await progressive(make_runtime, fake_openai)
    fake_openai.push(
        text_reply(
            "Here it is:\n```python\ndef fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n```"
        ),
        text_reply("ok"),
    )
    _, _, sid = await run_turn(rt, "write a python function for the nth fibonacci number")
    assert fake_openai.tool_names(0) == ["tool_search_find"]  # writing code needs no tool
    await run_turn(rt, "run it for n=30", sid)
    assert "python_runner_run" in fake_openai.tool_names(1)


async def test_thanks_after_a_tool_turn_offers_nothing_new_and_a_bare_follow_up_gets_the_tool(
    make_runtime: Any, fake_openai: FakeOpenAI
) -> None:
    rt = await progressive(make_runtime, fake_openai)
    fake_openai.push(
        tool_reply(call("datetime_now", {"timezone": "Asia/Tokyo"}, id="t1")),
        text_reply("It is 18:42 in Tokyo."),
        text_reply("You're welcome!"),
        tool_reply(call("datetime_now", {"timezone": "Europe/London"}, id="t2")),
        text_reply("It is 09:42 in London."),
    )
    _, _, sid = await run_turn(rt, "what time is it in Tokyo")
    assert "datetime_now" in fake_openai.tool_names(0)
    await run_turn(rt, "thanks!", sid)
    assert fake_openai.tool_names(2) == ["tool_search_find"]
    await run_turn(rt, "and in London?", sid)
    assert "datetime_now" in fake_openai.tool_names(3)  # carried from the tool turn it continues
