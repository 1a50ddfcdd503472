"""Request preparation: units, stemming and the masks that keep literal payloads from routing."""

from __future__ import annotations

from weclaw_desktop.intent.text import keyword_units, prepare, stem


def test_units_split_chinese_characters_and_english_words() -> None:
    assert prepare("用Word打开报告").units == ["用", "word", "打", "开", "报", "告"]
    assert prepare("ＺＩＰ　两个文件").units == ["zip", "两", "个", "文", "件"]  # full-width folded


def test_stemming_is_consistent_for_common_inflections() -> None:
    assert {stem(w) for w in ("zip", "zipped", "zipping", "zips")} == {"zip"}
    assert {stem(w) for w in ("copy", "copies", "copied")} == {"copy"}
    assert stem("news") != stem("new")
    assert stem("processes") == stem("process")


def test_paths_names_urls_and_addresses_are_masked() -> None:
    p = prepare(r"把 ~/Pictures/截图2.png 和 D:\资料\截图.zip 发给 a.b@x.com 看 https://x.com/截图")
    assert "截" not in p.units  # the word 截图 only ever appeared inside payloads
    assert p.units.count("‹path›") == 2
    assert "‹url›" in p.units and "‹email›" in p.units
    assert p.has_path and p.has_url and p.has_email
    assert "‹archive›" in p.units  # a .zip was named


def test_quoted_text_is_payload() -> None:
    p = prepare("add 'email the landlord' and “截图” to my list")
    assert "email" not in p.units
    assert p.units.count("‹quote›") == 2


def test_math_and_clock_markers() -> None:
    assert prepare("2,340 * 0.075").has_math
    assert prepare("15% of 880").has_math
    assert not prepare("订单号 20240517-8832").has_math  # an id, not arithmetic
    assert prepare("明早八点叫我").has_clock
    assert prepare("at 6:30 pm").has_clock
    assert not prepare("改得正式一点").has_clock  # 一点 = "a little"


def test_gapped_keywords_split_into_segments() -> None:
    assert keyword_units("发*手机") == [["发"], ["手", "机"]]
    assert keyword_units("send * to my phone") == [["send"], ["to", "my", "phon"]]  # stemmed like requests
