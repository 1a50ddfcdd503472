from __future__ import annotations

from fakeopenai import FakeOpenAI, call, text_reply, tool_reply

from weclaw_desktop.agent import events as ev


async def test_plain_and_tool(fake_openai: FakeOpenAI, make_runtime) -> None:
    rt = await make_runtime()
    s = await rt.create_session()
    fake_openai.push(tool_reply(call("echo_say", {"text": "hi"}, split=3)), text_reply("Done", "!"))
    seen: list[ev.Event] = []
    h = rt.start_turn(s.id, "echo hi", on_event=seen.append)
    done = await h.wait()
    print([e.kind for e in seen])
    print(done)
    print(await rt.load_messages(s.id))
    print(await rt.audit.records(session_id=s.id))
    assert done.reason == "completed"
