"""Conversation context: follow-ups are routed with the previous turns (what the user asked, which tools
ran, what the assistant produced), and thanks expose nothing — on the real catalogue."""

from __future__ import annotations

import pytest

from weclaw_desktop.intent.conversation import Conversation, Turn, produced
from weclaw_desktop.intent.engine import IntentEngine
from weclaw_desktop.toolkit.manifest import Manifest

CODE = Turn("write a python function for fibonacci", "```python\ndef fib(n):\n    return n\n```")
SHELL = Turn("show me a one-liner", "```bash\nfind . -name '*.py' | xargs wc -l\n```")
DRAFT = Turn(
    "draft a mail to my landlord",
    "Subject: Heating\n\nHi Mr. Lee,\n\nThe heating is broken since Monday.\n\nBest,\nSam",
)
DOCX = Turn("make a word doc of the notes", "Saved to ~/outputs/notes.docx", ("doc_writer",), ("~/outputs/notes.docx",))


@pytest.fixture(scope="module")
def engine(real_manifest: Manifest) -> IntentEngine:
    return IntentEngine(real_manifest)


def route(e: IntentEngine, text: str, *turns: Turn) -> list[str]:
    return e.route(text, context=Conversation(list(turns))).tools


def test_what_the_assistant_produced_is_read_from_its_answer() -> None:
    assert produced(CODE) == ["‹pycode›"]
    assert produced(SHELL) == ["‹code›"]
    assert produced(DRAFT) == ["‹draft›"]
    assert produced(DOCX)[:2] == ["‹ref›", "‹path›"]
    assert produced(Turn("hi", "Hello! How can I help?")) == []


def test_a_follow_up_about_produced_code_routes_to_running_it(engine: IntentEngine) -> None:
    """'run it' means the code the assistant wrote: Python to python_runner, a shell line to shell; the
    Chinese verb without an object ('跑一下') refers to it too."""
    assert "python_runner" in route(engine, "run it for n=30", CODE)
    assert "shell" in route(engine, "try it in ~/code", SHELL)
    assert "python_runner" in route(engine, "好 在 ~/照片 目录里跑一下", CODE)
    assert route(engine, "run it for n=30") == []  # without the conversation 'it' is nothing


def test_a_draft_is_sent_by_email_and_a_made_file_goes_to_the_phone(engine: IntentEngine) -> None:
    assert "email" in route(engine, "looks good, send it to lee@rentals.com", DRAFT)
    assert "remote_file_share" in route(engine, "now send it to my phone", DOCX)


def test_explaining_deferring_or_reworking_a_result_needs_no_tool(engine: IntentEngine) -> None:
    """Questions about what was produced, 'not yet' and 'make it nicer' are the model's own job."""
    assert route(engine, "can you explain the xargs part", SHELL) == []
    assert route(engine, "what does that command do?", SHELL) == []
    assert route(engine, "don't send it yet, make it more polite", DRAFT) == []
    assert route(engine, "先别运行，我想先看懂它", CODE) == []


def test_thanks_after_a_tool_turn_exposes_nothing_not_even_the_last_tool(engine: IntentEngine) -> None:
    for text in ("thanks!", "好的谢谢", "perfect", "cool thanks, that's all"):
        r = engine.route(text, context=Conversation([DOCX]))
        assert r.tools == [] and r.carried == [] and r.social


def test_a_bare_follow_up_carries_the_tools_of_the_turn_it_continues(engine: IntentEngine) -> None:
    """'actually make it the 2nd' and '那后天呢' route to nothing alone: they get the previous tool turn's
    tools, and the route says so."""
    rem = Turn("remind me to pay rent on the 1st", "Reminder set for Dec 1.", ("reminder",))
    r = engine.route("actually make it the 2nd", context=Conversation([rem]))
    assert r.tools == ["reminder"] and r.carried == ["reminder"]
    assert "follow-up" in r.reasons["reminder"]
    weather = Turn("查一下深圳明天的天气", "深圳明天多云。", ("web",))
    assert route(engine, "那后天呢", weather) == ["web"]


def test_a_tool_three_tool_turns_back_is_reached_when_the_follow_up_refers_to_it(engine: IntentEngine) -> None:
    """The turn that shares the follow-up's words is picked, not just the newest."""
    turns = [
        Turn("remind me at 5pm to call mom", "Reminder set for 17:00.", ("reminder",)),
        Turn("what's the weather in paris", "8°C, rain.", ("web",)),
        Turn("what's a 15% tip on 84 euros", "12.60", ("calculator",)),
    ]
    assert "reminder" in route(engine, "oh and push that call to mom to 6", *turns)
    assert "reminder" in route(engine, "move the mom thing to six", *turns)


def test_an_own_intent_wins_over_carrying(engine: IntentEngine) -> None:
    """A follow-up that asks for something else gets that, not the earlier turn's tools."""
    rem = Turn("remind me to pay rent", "Done.", ("reminder",))
    r = engine.route("take a screenshot", context=Conversation([rem]))
    assert r.tools == ["screen"] and r.carried == []


def test_labelled_history_builds_the_same_context() -> None:
    c = Conversation.from_labels([{"user": "a", "assistant": "b", "tools": ["web"]}, {"user": "c"}])
    assert [t.user for t in c.turns] == ["a", "c"]
    assert c.recent_tools() == [["web"]]


def test_a_yes_to_an_offer_routes_the_offer_and_a_no_routes_nothing(engine: IntentEngine) -> None:
    """The assistant ended with "Want me to zip ~/logs and send it to your phone?": "yes please" needs the
    tools of that offer; "no thanks" needs none; a new request is routed as itself."""
    offer = Turn("my logs folder is huge", "It's 2 GB. Want me to zip ~/logs and send it to your phone?")
    assert set(route(engine, "yes please", offer)) >= {"archive", "remote_file_share"}
    assert set(route(engine, "好的", Turn("整理好了", "要不要我发到你手机上？"))) == {"remote_file_share"}
    assert route(engine, "no thanks", offer) == []
    assert route(engine, "take a screenshot", offer) == ["screen"]


def test_sending_it_oneself_after_a_draft_needs_no_tool(engine: IntentEngine) -> None:
    assert route(engine, "thanks, i'll send it myself", DRAFT) == []
    assert "email" in route(engine, "thanks, now send it to lee@x.com", DRAFT)


def test_an_earlier_result_does_not_break_the_phrase_its_pronoun_is_part_of(engine: IntentEngine) -> None:
    """'do it later' after an offer stays a deferral; 'look it up' stays a search."""
    offer = Turn("my desktop is a mess", "I see 48 files. Shall I sort them into folders by type?")
    assert route(engine, "nah i'll do it later", offer) == []
    assert "web" in route(engine, "look it up online", Turn("who wrote dune", "Frank Herbert, I think."))


def test_a_closing_after_thanks_carries_nothing(engine: IntentEngine) -> None:
    assert route(engine, "谢谢，没别的了", DOCX) == []
    assert route(engine, "thanks, nothing else", DOCX) == []


def test_editing_what_the_assistant_wrote_is_its_own_job(engine: IntentEngine) -> None:
    """'add a line thanking them' after a draft, 'make it handle negatives' after code: no tool (not the
    file tool's "add a line"); the same words about a reminder turn, or a send, still route."""
    assert route(engine, "add a line thanking them", DRAFT) == []
    assert route(engine, "make it handle negative numbers too", CODE) == []
    assert route(engine, "改成更正式的语气", DRAFT) == []
    assert "email" in route(engine, "add a line thanking them and send it to hr@x.com", DRAFT)
    rem = Turn("remind me to buy flowers at 6", "Reminder set for 18:00.", ("reminder",))
    assert "reminder" in route(engine, "make it 5:30", rem)
