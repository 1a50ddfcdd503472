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


def test_every_quote_style_is_payload_even_right_after_chinese_text() -> None:
    """「」『』“”‘’《》 and ASCII quotes, with no space before them, and apostrophes inside a quote."""
    for text in (
        "把“发邮件”加到待办",
        "把「发邮件」加到待办",
        "把『发邮件』加到待办",
        "把‘发邮件’加到待办",
        "把'发邮件'加到待办",
        "读《邮件礼仪》",
    ):
        p = prepare(text)
        assert "邮" not in p.units, text
        assert "‹quote›" in p.units
    p = prepare("add 'don't email the landlord' to my list")
    assert "email" not in p.units and p.units.count("‹quote›") == 1
    assert "it" in prepare("it's john's thing, isn't it").units  # apostrophes alone open no quote


def test_code_fences_and_stack_traces_are_masked_before_lines_are_joined() -> None:
    """Pasted code and error output hold tool words ('open', 'File', 'zip'); none of them may route."""
    p = prepare("what does this do?\n```python\nimport zipfile\nzipfile.ZipFile('a.zip').extractall()\n```")
    assert "zipfil" not in p.units and "‹pycode›" in p.units and p.has_code
    p = prepare("```bash\nssh me@host 'tar xzf x.tar.gz'\n```")
    assert p.units == ["‹code›"]
    trace = 'Traceback (most recent call last):\n  File "main.py", line 3, in <module>\n    open("data.csv")\nFileNotFoundError: x'
    p = prepare("why?\n" + trace)
    assert p.has_paste and "open" not in p.units and "fil" not in p.units
    java = "NullPointerException\n    at com.app.Main.run(Main.java:10)\n    at com.app.Main.main(Main.java:3)\nhelp"
    assert "‹paste›" in prepare(java).units


def test_colon_introduced_content_is_masked_to_the_end_of_its_sentence() -> None:
    """After "what does this mean:", "copy this to my clipboard:" or "加一条：" comes content; the next
    sentence is a request again, and a lone address after the colon is what the request acts on."""
    p = prepare("copy this to my clipboard: ssh admin@10.0.0.5")
    assert p.units == ["copy", "this", "to", "my", "clipboard", "‹quote›"]
    p = prepare("Save this to memory: my code is 4471. And add 'gym' to my todos")
    assert "todo" in p.units and "cod" not in p.units
    p = prepare("read this page and tell me if it's legit: https://shop.example.net")
    assert "‹url›" in p.units
    assert "email" in prepare("note: email the report to Tom").units  # a bare label introduces a request
    assert "zip" in prepare("do the following: zip ~/logs").units  # so does a list of steps
    assert prepare("remind me at 9:30 to call").has_clock  # the colon of a time is no colon


def test_a_bare_format_name_is_a_file_kind_not_a_path() -> None:
    """'tar.gz' and '.docx' name a format; 'backup.tar.gz' and '~/x' are paths."""
    p = prepare("what's the difference between zip and tar.gz?")
    assert not p.has_path and "‹archive›" in p.units
    assert prepare("extract backup.tar.gz").has_path
    assert not prepare("cron */5 means every five minutes").has_path  # no letter: not a path


def test_clauses_split_on_punctuation_and_joining_words_but_not_inside_numbers() -> None:
    def clauses(text: str) -> list[list[str]]:
        p = prepare(text)
        return [p.units[a:b] for a, b in p.clauses]

    assert clauses("zip the logs, and remind me at 3") == [
        ["zip", "the", "log"],
        ["and", "remind", "me", "at", "#", "‹clock›"],
    ]
    assert len(clauses("帮我查下明天天气，顺便提醒我带伞")) == 2
    assert len(clauses("把报告压缩一下然后发到我手机")) == 2
    assert len(clauses("the mean of 4, 8, 15, 16")) == 1


def test_dotfiles_are_file_names() -> None:
    assert prepare("what does my .bashrc say about PATH").has_path
    assert not prepare("version 2.5 is out").has_path


def test_commands_typed_without_backticks_and_english_dates_are_marked() -> None:
    assert prepare("run df -h").units == ["run", "‹code›"]
    assert "‹code›" not in prepare("a state-of-the-art idea - nice").units  # no flags, no command
    assert prepare("was 1 jan 2000 a saturday").has_date
    assert prepare("march 3rd, 2027 is a wednesday?").has_date
