"""Preset labels: bilingual in the preset list, one language in the status bar."""

from __future__ import annotations

from weclaw_desktop.agent.presets import PRESETS, get_preset


def test_short_label_drops_chinese_words_in_english_only() -> None:
    deepseek = get_preset("deepseek")
    assert deepseek.short_label("en") == "DeepSeek"
    assert deepseek.short_label("zh") == "DeepSeek 深度求索"
    assert get_preset("qwen").short_label("en") == "Qwen (DashScope)"
    assert all(
        p.short_label("en") and not any("\u4e00" <= c <= "\u9fff" for c in p.short_label("en"))
        for p in PRESETS.values()
    )
