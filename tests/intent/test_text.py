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


def test_discounts_are_maths() -> None:
    assert prepare("1299 打 85 折是多少钱").has_math
    assert prepare("原价两百，打八五折").has_math
    assert not prepare("打折季什么时候开始").has_math  # a discount with no rate to work on


def test_backticked_code_is_masked_as_a_command_or_a_python_snippet() -> None:
    p = prepare("run `rm -rf build/` in the project")
    assert p.has_code
    assert p.units == ["run", "‹code›", "in", "the", "project"]  # 'rm', the flags and the path stay out
    p = prepare("跑一下 `import os; print(os.getcwd())`")
    assert p.units == ["跑", "一", "下", "‹pycode›"]
    assert not prepare("it's a plain sentence").has_code


def test_calendar_dates_get_a_marker() -> None:
    assert prepare("born on 1985-03-02").has_date
    assert prepare("下个月3月15号交房租").has_date
    assert prepare("2026年3月的账单").has_date
    assert not prepare("订单号 20240517-8832").has_date  # an id, not a date


def test_the_text_after_the_colon_of_a_rework_request_is_payload() -> None:
    p = prepare("翻译成中文：remind me later")
    assert p.units == ["翻", "译", "成", "中", "文", "‹quote›"]
    assert p.has_quote
    p = prepare("Make this sentence sound friendlier: send me the report")
    assert "send" not in p.units
    # no rework verb before the colon: the words after it still route
    assert "email" in prepare("note: email the report to Tom").units


def test_arithmetic_in_words_is_maths_but_time_is_not() -> None:
    assert prepare("what is 3 times 4").has_math
    assert prepare("12 divided by 5").has_math
    assert not prepare("what is the time complexity of quicksort").has_math


def test_chat_shorthand_reads_as_the_word_it_stands_for() -> None:
    assert prepare("in 45 min").units == prepare("in 45 minutes").units
    assert prepare("screenshot pls").units == prepare("screenshot please").units
    assert prepare("u盘").units == keyword_units("u盘")[0]  # keywords go through the same mapping
