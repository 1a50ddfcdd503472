"""Typo tolerance: an unknown English word one edit from exactly one keyword word is read as it; known and
everyday words are never changed (a wrong correction would route a request that needs nothing)."""

from __future__ import annotations

from weclaw_desktop.intent.engine import IntentEngine
from weclaw_desktop.intent.typos import TypoIndex
from weclaw_desktop.toolkit.manifest import Manifest


def test_one_edit_from_a_single_known_word_is_corrected() -> None:
    index = TypoIndex(["battery", "remind", "screenshot", "archive"], known=["thank"])
    units = ["check", "my", "batery", "remnid", "screenshto", "thank", "mail", "vattery"]
    index.correct(units)
    assert units[2:5] == ["battery", "remind", "screenshot"]  # deletion, swap, swap at the end
    assert units[5:] == ["thank", "mail", "vattery"]  # everyday, short, a different first letter: unchanged


def test_two_candidates_or_a_different_first_letter_are_left_alone() -> None:
    index = TypoIndex(["files", "filet"])
    units = ["filez", "giles"]
    index.correct(units)
    assert units == ["filez", "giles"]


def test_typos_reach_the_tools_through_the_engine(real_manifest: Manifest) -> None:
    e = IntentEngine(real_manifest)
    assert "system_info" in e.route("cn u check my batery pls").tools
    assert "reminder" in e.route("remnid me tomorow at 9 to call the bank").tools
    assert e.route("thanks!").tools == []  # 'thank' is not read as 'think'
