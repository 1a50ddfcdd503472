"""Arguments as cards and the approval dialog show them."""

from __future__ import annotations

from weclaw_desktop.ui.arguments import readable_arguments


def test_one_line_per_argument_and_code_as_an_indented_block() -> None:
    raw = '{"code": "import time\\n\\nprint(1)\\n", "cwd": "~", "timeout_s": 120, "args": ["a", "中文"]}'
    assert readable_arguments(raw) == (
        'code:\n    import time\n\n    print(1)\ncwd: ~\ntimeout_s: 120\nargs: ["a", "中文"]'
    )


def test_not_an_object_is_shown_as_sent() -> None:
    assert readable_arguments('{"broken": ') == '{"broken": '
    assert readable_arguments("[1, 2]") == "[1, 2]"
    assert readable_arguments("") == ""
    assert readable_arguments({"command": "rm -rf build", "force": True}) == "command: rm -rf build\nforce: true"
