"""The pieces that read a stream: <think> tags across any chunk boundary, SSE framing, reasoning_details merging.

What must survive: wherever the chunk boundaries fall (every split position of the whole text is tried), the answer
and the thinking come out exactly the same, and no tag text leaks into the answer; an answer that merely mentions
``<think>`` is left alone; a closing tag without an opening one retracts what was shown as answer; SSE lines split
anywhere (``\\r\\n`` cut in half included) give the same events, keep-alive comments are counted and skipped.
"""

from __future__ import annotations

import pytest

from weclaw_desktop.agent.provider.assembly import StreamAssembler, merge_details
from weclaw_desktop.agent.provider.profiles import get_profile
from weclaw_desktop.agent.provider.sse import SSEReader
from weclaw_desktop.agent.provider.think import ThinkParser


def run(parts: list[str], tags: tuple[str, ...] = ("think",)) -> tuple[str, str, int]:
    parser = ThinkParser(list(tags))
    text: list[str] = []
    reasoning: list[str] = []
    retracts = 0
    for segments in [parser.feed(p) for p in parts] + [parser.finish()]:
        for kind, piece in segments:
            if kind == "text":
                text.append(piece)
            elif kind == "reasoning":
                reasoning.append(piece)
            else:
                retracts += 1
                reasoning.insert(0, "".join(text))
                text.clear()
    return "".join(text), "".join(reasoning), retracts


WHOLE = [
    ("<think>Plan: add 2 and 2.</think>\n\nThe answer is 4.", "The answer is 4.", "Plan: add 2 and 2."),
    ("  \n<think>a<b</think>Answer with < and </thin k>.", "Answer with < and </thin k>.", "a<b"),
    ("No thinking at all.", "No thinking at all.", ""),
    ("Code: `<think>` is a tag.", "Code: `<think>` is a tag.", ""),
    ("<think>unclosed thought", "", "unclosed thought"),
    ("<thought>Gemini style</thought>Hi", "Hi", "Gemini style"),
    ("<think>one</think><think>two</think>\nDone", "Done", "onetwo"),
]


@pytest.mark.parametrize(("whole", "answer", "thought"), WHOLE)
def test_every_split_position_gives_the_same_result(whole: str, answer: str, thought: str) -> None:
    assert run([whole], ("think", "thought"))[:2] == (answer, thought)
    for cut in range(1, len(whole)):
        assert run([whole[:cut], whole[cut:]], ("think", "thought"))[:2] == (answer, thought), cut
    for size in (1, 2, 3, 5):
        parts = [whole[i : i + size] for i in range(0, len(whole), size)]
        assert run(parts, ("think", "thought"))[:2] == (answer, thought), size


def test_closing_tag_without_opening_retracts_the_shown_text() -> None:
    """R1-distill templates open <think> in the prompt: only </think> arrives."""
    whole = "I should greet.\n</think>\n\nHello!"
    for cut in range(1, len(whole)):
        answer, thought, retracts = run([whole[:cut], whole[cut:]])
        assert (answer, thought, retracts) == ("Hello!", "I should greet.\n", 1), cut


def test_no_tags_configured_passes_content_through() -> None:
    assert run(["<think>x</think>y"], ()) == ("<think>x</think>y", "", 0)


def test_assembler_keeps_think_text_out_of_the_answer_and_times_it() -> None:
    ticks = iter([10.0, 12.5, 99.0])
    shown: list[str] = []
    asm = StreamAssembler(get_profile("lmstudio"), on_reasoning=shown.append, clock=lambda: next(ticks))
    for piece in ["<thi", "nk>Let me ", "see.</th", "ink>\n\n4"]:
        asm.add({"choices": [{"index": 0, "delta": {"content": piece}}]})
    asm.add({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    result = asm.finish(done=True)
    assert (result.text, result.reasoning, "".join(shown)) == ("4", "Let me see.", "Let me see.")
    assert result.reasoning_field == "" and result.reasoning_ms == 2500


def test_reasoning_fields_are_not_doubled_and_opaque_fields_are_kept() -> None:
    """vLLM sends `reasoning` and `reasoning_content` with the same text; unknown fields are kept, last wins."""
    asm = StreamAssembler(get_profile("custom"))
    asm.add({"choices": [{"index": 0, "delta": {"reasoning": "x", "reasoning_content": "x", "sig": "a"}}]})
    asm.add({"choices": [{"index": 0, "delta": {"reasoning": "y", "reasoning_content": "y", "sig": "ab"}}]})
    asm.add({"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]})
    result = asm.finish(done=True)
    assert (result.reasoning, result.reasoning_field, result.extras) == ("xy", "reasoning_content", {"sig": "ab"})


def test_reasoning_details_merge_by_index() -> None:
    blocks: list[dict[str, object]] = []
    merge_details(blocks, [{"type": "reasoning.text", "text": "Hel", "index": 0}])
    merge_details(blocks, [{"type": "reasoning.text", "text": "lo", "index": 0, "signature": None}])
    merge_details(blocks, [{"type": "reasoning.encrypted", "data": "QUJD", "index": 1}])
    merge_details(blocks, [{"index": 0, "signature": "s1"}])
    assert blocks == [
        {"type": "reasoning.text", "text": "Hello", "index": 0, "signature": "s1"},
        {"type": "reasoning.encrypted", "data": "QUJD", "index": 1},
    ]


SSE = b': keep-alive\r\n\r\ndata: {"a": 1}\r\n\r\nevent: x\ndata: line1\ndata: line2\n\n: ping\n\ndata: [DONE]\n\n'


def test_sse_split_anywhere() -> None:
    expected = [('{"a": 1}', ""), ("line1\nline2", "x"), ("[DONE]", "")]
    for cut in range(len(SSE) + 1):
        reader = SSEReader()
        events = reader.feed(SSE[:cut]) + reader.feed(SSE[cut:]) + reader.finish()
        assert [(e.data, e.event) for e in events] == expected, cut
        assert reader.comments == 2


def test_sse_last_event_without_blank_line_and_bom() -> None:
    reader = SSEReader()
    events = reader.feed(b'\xef\xbb\xbfdata: {"x": 1}\n\ndata: tail') + reader.finish()
    assert [e.data for e in events] == ['{"x": 1}', "tail"]


def test_events_are_the_same_however_the_bytes_are_split() -> None:
    """A burst (the whole answer in one read) and a trickle (a few bytes per read, line breaks of every kind
    split anywhere) give the same events and comments: the reader cuts lines at a moving position and keeps
    only the unfinished rest between reads."""
    from weclaw_desktop.agent.provider.sse import SSEReader

    body = b"".join(
        (b'data: {"n": %d}\r\n\r\n' if i % 3 == 0 else b'data: {"n": %d}\n\n' if i % 3 == 1 else b'data: {"n": %d}\r\r')
        % i
        + (b": keep-alive\n" if i % 50 == 0 else b"")
        for i in range(600)
    )

    def read(size: int) -> tuple[list[str], int]:
        reader = SSEReader()
        events = []
        for i in range(0, len(body), size):
            events += reader.feed(body[i : i + size])
        events += reader.finish()
        return [e.data for e in events], reader.comments

    whole = read(len(body))
    assert whole[0] == [f'{{"n": {i}}}' for i in range(600)] and whole[1] == 12
    for size in (1, 2, 3, 7, 64, 4096):
        assert read(size) == whole, f"reads of {size} bytes"
