"""Scoring, tiers and unions of the intent engine, on a small manifest with known thresholds."""

from __future__ import annotations

import pytest
from routing_helpers import make, small_manifest

from weclaw_desktop.intent.engine import QUESTION_DAMP, STRONG, WEAK, IntentEngine


def engine(**exposure: object) -> IntentEngine:
    return IntentEngine(make(small_manifest(**exposure)))


def scores(e: IntentEngine, text: str) -> dict[str, float]:
    ranked, _ = e.score(text)
    return {s.name: round(s.score, 4) for s in ranked}


def test_strong_keyword_scores_strong_and_routes_recommended() -> None:
    e = engine()
    assert scores(e, "rename the report") == {"files": STRONG}
    route = e.route("rename the report")
    assert route.tier == "recommended"
    assert route.tools == ["files"]
    assert route.reasons == {"files": "intent files (0.85, recommended)"}


def test_weak_keyword_alone_gives_the_expanded_tier_with_alternatives() -> None:
    e = engine()
    assert scores(e, "that file again") == {"files": WEAK}
    route = e.route("that file again")
    assert route.tier == "expanded"
    assert route.tools == ["files", "shell"]


def test_evidence_combines_as_noisy_or() -> None:
    e = engine()
    assert scores(e, "rename this file") == {"files": round(1 - (1 - STRONG) * (1 - WEAK), 4)}
    # two weak words reach the high tier together
    assert scores(e, "file 文件") == {"files": round(1 - (1 - WEAK) ** 2, 4)}
    assert e.route("file 文件").tier == "recommended"


def test_no_match_is_clarify_with_no_domain_tools() -> None:
    route = engine().route("黑洞是怎么形成的？")
    assert route.tier == "clarify"
    assert route.tools == []
    assert route.intents == []


def test_english_matches_on_word_boundaries_only() -> None:
    e = engine()
    assert scores(e, "update my profile picture") == {}  # 'file' inside 'profile'
    assert scores(e, "renamed it") == {"files": STRONG}  # stemmed: renamed -> rename
    assert scores(e, "RENAME IT") == {"files": STRONG}  # case-insensitive


def test_chinese_matches_without_segmentation_and_in_mixed_text() -> None:
    e = engine()
    assert scores(e, "帮我把这个zip压缩包解开") == {"archive": round(1 - (1 - STRONG) ** 2, 4)}
    assert scores(e, "用email发给他") == {"mail": STRONG}


def test_gapped_keyword_allows_words_in_between_but_not_too_many() -> None:
    e = engine()
    assert "phone" in scores(e, "把视频发到我的手机")
    assert "phone" not in scores(e, "发了一个很长很长很长的消息说手机")  # gap of more than six units


def test_multi_intent_request_exposes_the_union() -> None:
    route = engine().route("把报告压缩一下发到我手机")
    assert [s.name for s in route.intents] == ["phone", "archive"] or [s.name for s in route.intents] == [
        "archive",
        "phone",
    ]
    assert set(route.tools) == {"zipper", "phone"}
    assert route.tier == "recommended"


def test_disabled_tools_are_never_routed() -> None:
    route = engine().route("send it to my phone")
    assert "off" not in route.tools  # recommended but disabled in tools.json
    assert route.tools == ["phone"]


def test_alternatives_stand_in_when_no_recommended_tool_is_enabled() -> None:
    data = small_manifest()
    data["tools"]["zipper"]["enabled"] = False
    route = IntentEngine(make(data)).route("zip the reports")
    assert route.tools == ["files"]  # archive's alternative
    assert route.reasons["files"] == "intent archive (0.85, alternative, recommended not enabled)"


def test_recommended_tools_come_before_alternatives_under_the_tool_limit() -> None:
    data = small_manifest(max_tools_per_request=2)
    data["intents"]["archive"]["topics"] = {"en": ["bundle"]}
    route = IntentEngine(make(data)).route("bundle that file")  # two medium intents: both expanded
    assert route.tier == "expanded"
    assert set(route.tools) == {"zipper", "files"}  # shell, an alternative, is cut first
    assert "shell" not in route.reasons


def test_a_side_intent_beside_a_confident_one_needs_more_than_one_generic_word() -> None:
    route = engine().route("zip that file")  # archive strong, files only the weak word 'file'
    assert route.tools == ["zipper"]
    assert route.tier == "recommended"
    route = engine().route("zip and rename that file")  # files strong too: the union
    assert set(route.tools) == {"zipper", "files"}


def test_thresholds_come_from_tools_json() -> None:
    strict = engine(high_threshold=0.9, medium_threshold=0.5)
    assert strict.route("rename it").tier == "expanded"  # 0.85 < 0.9
    assert strict.route("that file").tier == "clarify"  # 0.4 < 0.5


def test_knowledge_question_is_damped_unless_it_is_about_the_users_things() -> None:
    e = engine()
    ranked, question = e.score("how do I rename a file on a mac?")
    assert question is True
    assert ranked[0].score == pytest.approx((1 - (1 - STRONG) * (1 - WEAK)) * QUESTION_DAMP)
    assert e.route("how do I rename a file on a mac?").tools == []
    ranked, question = e.score("how do I rename my file ~/a.txt")
    assert question is False
    assert e.route("how do I rename my file ~/a.txt").tools == ["files"]


def test_a_longer_match_hides_a_shorter_one_inside_it() -> None:
    data = small_manifest()
    data["intents"]["mail"]["action_phrases"]["zh"].append("文件发邮件")
    e = IntentEngine(make(data))
    got = scores(e, "文件发邮件")
    assert "files" not in got  # '文件' lies inside '文件发邮件'
    assert got["mail"] == STRONG  # '邮件' lies inside it too: the phrase counts once, not twice


def test_a_big_intent_is_not_penalised_for_its_many_keywords() -> None:
    small = IntentEngine(make(small_manifest(similarity_weight=0.5)))
    data = small_manifest(similarity_weight=0.5)
    data["intents"]["files"]["action_phrases"]["en"] += [f"unrelatedword{i}" for i in range(300)]
    big = IntentEngine(make(data))
    for text in ("rename the report", "把这个文件重命名"):
        assert scores(big, text)["files"] >= scores(small, text)["files"]


def test_payload_masks_keep_literal_text_from_routing() -> None:
    e = engine()
    assert scores(e, "open ~/Backups/rename_me/zip_notes.txt") == {}
    assert scores(e, 'add "email Tom about the zip" to the list') == {}
    assert scores(e, "visit https://example.com/rename") == {}


def test_similarity_signal_reaches_the_medium_tier_at_most() -> None:
    with_sim = engine(similarity_weight=0.5)
    ranked, _ = with_sim.score("read and write")  # words of the files tool's description, no keyword
    top = ranked[0]
    assert top.name == "files"
    assert top.keyword == 0
    assert 0 < top.score <= 0.5
    without = engine(similarity_weight=0.0)
    assert scores(without, "read and write") == {}


def test_a_writing_request_counts_only_strong_keywords() -> None:
    e = engine(similarity_weight=0.5)
    assert e.route("write a poem about my old file").tools == []  # the model writes; 'file' is only weak
    assert e.route("帮我写一首关于文件的诗").tools == []
    assert e.route("write a poem and rename the file to poem.txt").tools == ["files"]  # a path: not just writing
    assert e.route("write a summary and email it").tools == ["mail"]  # an explicit tool phrase still counts


def test_a_complaint_with_a_question_word_is_not_a_knowledge_question() -> None:
    _, question = engine().score("文件怎么这么大")
    assert question is False
    _, question = engine().score("文件为什么这么大")
    assert question is True


def test_an_action_verb_before_the_question_words_makes_them_its_object() -> None:
    e = engine()
    # "look up" comes first: the question is what to search for, so nothing is damped
    _, question = e.score("look up how to rename a file")
    assert question is False
    # the question comes first: it asks how to do the search, the model answers that itself
    _, question = e.score("how to look up a file rename")
    assert question is True


def test_numbers_to_work_on_make_a_question_a_sum_but_pasted_code_stays_a_question() -> None:
    """Figures turn "what's a" into a sum to work out; code pasted into a question is text for the model
    to read (it explains it), and the masked command's words cannot route."""
    e = engine()
    assert e.score("what is a 15% tip on 84 dollars")[1] is False
    assert e.score("what is a tip")[1] is True
    ranked, question = e.score("why does `zip -r out.zip .` fail")
    assert question is True
    assert ranked == []
    assert e.route("run `zip -r out.zip .` please").tools == []  # the small manifest has no shell phrase


def test_a_question_about_the_present_is_not_a_knowledge_question() -> None:
    e = engine()
    assert e.score("who is the mayor of Paris")[1] is True
    # the model's knowledge is out of date: only a tool can answer
    assert e.score("who is the mayor of Paris right now")[1] is False
    assert e.score("什么是邮件")[1] is True
    assert e.score("今年最流行的邮件客户端是什么")[1] is False


def test_a_rework_request_with_its_text_after_a_colon_is_a_writing_request() -> None:
    e = engine(similarity_weight=0.5)
    # the words after the colon are the text to rework, and the request itself is the model's job
    assert e.route("make this friendlier: rename the file and email it").tools == []
    assert e.route("把这句改得客气点：文件重命名一下").tools == []
    # without a rework verb before the colon the request still routes
    assert e.route("one more thing: rename the file").tools == ["files"]
