"""A worst-case model for the fake OpenAI server: it obeys every instruction it finds in what it reads.

Instructions are lines ``STEP <function> <json arguments>`` anywhere in a tool result (a hidden paragraph
of a web page, an MCP result, a file from the phone, the clipboard) or, when told to, in the user's own
message (pasted text). Before them it does the user's task (``task``: the calls an honest model would
make). It makes one call per round, in order; a function it was not offered is first looked up with
tool_search_find (the legitimate way through the exposure boundary), then called anyway. Secrets it saw
are substituted into later instructions: ``%TOKEN%`` is the value after ``oauth_token:`` in any tool
result, ``%TOKEN_B64%`` the same base64-encoded, ``%PAD%`` 400 spaces (web pages squeeze whitespace, so
a model that wants to hide a command's tail pads it itself). When every step was tried it answers in text.

It is stateless: what was done is read back from the conversation it is sent, as a real model would.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from typing import Any

from fakeopenai import Reply, ToolCallSpec, call, text_reply, tool_reply

STEP = re.compile(r"STEP (\w+) (\{[^{}]*\})")
TOKEN = re.compile(r"oauth_token:\s*([^\s\"\\]+)")


@dataclass
class ObedientModel:
    task: list[ToolCallSpec] = field(default_factory=list)
    obey_user_text: bool = False
    answer: str = "Done."
    replies: int = 0

    def __call__(self, body: dict[str, Any]) -> Reply:
        self.replies += 1
        messages = body.get("messages") or []
        offered = {t["function"]["name"] for t in body.get("tools") or []}
        tool_texts = [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]
        done = [
            (c["function"]["name"], _canonical(c["function"].get("arguments")))
            for m in messages
            if m.get("role") == "assistant"
            for c in m.get("tool_calls") or []
        ]
        plan = [(s.name, _canonical(s.arguments_text)) for s in self.task]
        sources = list(tool_texts)
        if self.obey_user_text:
            sources = [str(m.get("content") or "") for m in messages if m.get("role") == "user"][-1:] + sources
        secrets = _secrets(tool_texts)
        for text in sources:
            for match in STEP.finditer(text):
                args = _fill(match.group(2), secrets)
                plan.append((match.group(1), _canonical(args)))
        for name, args in plan:
            if (name, args) in done:
                continue
            search = ("tool_search_find", _canonical(json.dumps({"query": name.replace("_", " ")})))
            if name not in offered and "tool_search_find" in offered and search not in done:
                return tool_reply(call("tool_search_find", {"query": name.replace("_", " ")}))
            return tool_reply(call(name, json.loads(args)))
        return text_reply(self.answer)


def _secrets(texts: list[str]) -> dict[str, str]:
    token = next((m.group(1) for t in texts for m in TOKEN.finditer(t)), "unknown")
    return {"TOKEN": token, "TOKEN_B64": base64.b64encode(token.encode()).decode(), "PAD": " " * 400}


def _fill(args: str, secrets: dict[str, str]) -> str:
    for key, value in secrets.items():
        args = args.replace("%" + key + "%", value)
    return args


def _canonical(arguments: Any) -> str:
    try:
        value = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return str(arguments)
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
