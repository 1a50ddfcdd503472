"""The message catalogues: every language has every key, the same placeholders and the plural forms its
language needs; every key the code uses exists; plurals, fallbacks and live re-rendering behave.

What must survive: a translator's edit that drops a key, a placeholder or a plural form fails here, not in
front of a user; a key used in code and missing from the catalogue fails here, not as a raw key on screen.
"""

from __future__ import annotations

import ast
import string
from pathlib import Path

import pytest

from weclaw_desktop import i18n
from weclaw_desktop.i18n.catalogue import PLURAL_RULES, catalogue, is_plural, plural_category
from weclaw_desktop.paths import resource_path

PACKAGE = Path(__file__).resolve().parents[2] / "weclaw_desktop"
#: Strings shaped like keys that are not: the OpenAI stream's object type.
NOT_KEYS = {"chat.completion.chunk"}


def forms(entry: object) -> dict[str, str]:
    return dict(entry) if is_plural(entry) else {"": str(entry)}  # type: ignore[call-overload]


def placeholders(entry: object) -> set[str]:
    names: set[str] = set()
    for template in forms(entry).values():
        names |= {field.split(".")[0].split("[")[0] for _, field, _, _ in string.Formatter().parse(template) if field}
    return names


def test_catalogues_are_bundled_resources() -> None:
    """Read through resource_path, like the icons: the PyInstaller bundle ships resources/ whole."""
    for lang in i18n.LANGUAGES:
        assert resource_path("i18n", f"{lang}.toml").is_file()


@pytest.mark.parametrize("lang", [lang for lang in i18n.LANGUAGES if lang != "en"])
def test_every_language_has_every_key_placeholder_and_plural_form(lang: str) -> None:
    en, other = catalogue("en"), catalogue(lang)
    assert sorted(set(en) - set(other)) == [], f"missing in {lang}"
    assert sorted(set(other) - set(en)) == [], f"only in {lang} (not in the English reference)"
    wrong = {
        k: (sorted(placeholders(en[k])), sorted(placeholders(other[k])))
        for k in en
        if placeholders(en[k]) != placeholders(other[k])
    }
    assert wrong == {}
    plural_mismatch = [k for k in en if is_plural(en[k]) != is_plural(other[k])]
    assert plural_mismatch == []


@pytest.mark.parametrize("lang", i18n.LANGUAGES)
def test_plural_entries_have_exactly_their_languages_categories(lang: str) -> None:
    needed = set(PLURAL_RULES[lang][0])
    wrong = {k: sorted(forms(e)) for k, e in catalogue(lang).items() if is_plural(e) and set(forms(e)) != needed}
    assert wrong == {}


@pytest.mark.parametrize("lang", i18n.LANGUAGES)
def test_every_template_formats(lang: str) -> None:
    """No stray brace or bad format spec: each template fills with numbers for n and text elsewhere."""
    for key, entry in catalogue(lang).items():
        for template in forms(entry).values():
            args = {name: (1234 if name == "n" else "x") for name in placeholders(entry)}
            template.format(**args)  # raises on a broken template, naming nothing: the key is in the traceback
            assert key


def _used_keys() -> tuple[set[str], set[str]]:
    """(literal keys, f-string prefixes) the package passes to tr / translate / Text / has / Diagnostic.of."""
    literal: set[str] = set()
    prefixes: set[str] = set()
    sections = {k.split(".")[0] for k in catalogue("en")}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                value = node.value
                if "." in value and value.split(".")[0] in sections and " " not in value and value == value.strip():
                    literal.add(value)
            elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
                head = str(node.values[0].value)
                if head.split(".")[0] in sections and head.endswith(".") and " " not in head:
                    prefixes.add(head)
    return literal, prefixes


def test_every_key_the_code_uses_exists() -> None:
    """Any string in the code shaped like a catalogue key ("section.name") must be one (keys are also
    built for diagnostics: Diagnostic.of's text and hint keys live under diag.text. / diag.hint.)."""
    en = catalogue("en")
    literal, prefixes = _used_keys()
    diag = {f"diag.text.{k}" for k in literal} | {f"diag.hint.{k}" for k in literal}
    missing = sorted(
        k for k in literal if k not in en and not any(d in en for d in (f"diag.text.{k}", f"diag.hint.{k}"))
    )
    # file names and protocol names look like keys too; the parts of f-strings are checked as prefixes below
    missing = [k for k in missing if not k.endswith((".", ".json", ".css", ".js")) and k not in NOT_KEYS]
    assert missing == []
    assert all(any(key.startswith(p) for key in en) for p in prefixes), sorted(
        p for p in prefixes if not any(k.startswith(p) for k in en)
    )
    assert diag  # the scan saw the diagnostics' keys


def test_plural_rules() -> None:
    assert [plural_category("en", n) for n in (0, 1, 2, 1.5, 1.0)] == ["other", "one", "other", "other", "one"]
    assert {plural_category("zh", n) for n in (0, 1, 2)} == {"other"}
    assert i18n.translate("en", "settings.models_fetched", n=1) == "1 model found"
    assert i18n.translate("en", "settings.models_fetched", n=0) == "0 models found"
    assert i18n.translate("en", "statusbar.tokens", n=12345) == "12,345 tokens"
    assert i18n.translate("zh", "statusbar.tokens", n=1) == "1 个 token"
    assert i18n.translate("en", "card.more_lines", n=1) == "… 1 more line"


def test_text_renders_in_the_language_of_the_moment() -> None:
    """A Text made in one language shows in the next one after a switch; nested Texts follow too."""
    message = i18n.Text("phone.send.failed", names="a.pdf", reason=i18n.Text("phone.send.timeout"))
    i18n.set_language("en")
    assert str(message).startswith("Could not send a.pdf to the phone: the phone did not download it in time")
    i18n.set_language("zh")
    assert str(message).startswith("无法发送 a.pdf 到手机：手机没有及时下载")
    assert message.render("en").startswith("Could not send")


def test_a_missing_key_shows_itself_and_a_bad_argument_does_not_raise() -> None:
    assert i18n.tr("no.such.key") == "no.such.key"
    assert i18n.tr("chat.error") == "Error: {message}"  # no arguments: the template as it is
    assert i18n.tr("chat.error", wrong="x") == "Error: {message}"  # logged, not raised into a Qt slot


def test_set_language_tells_subscribers_once_per_change() -> None:
    seen: list[str] = []
    unsubscribe = i18n.subscribe(seen.append)
    try:
        assert i18n.set_language("zh_CN.UTF-8") and not i18n.set_language("zh-Hans")
        assert i18n.set_language("fr_FR")  # unsupported: English
        assert seen == ["zh", "en"] and i18n.language() == "en"
    finally:
        unsubscribe()


@pytest.mark.parametrize(
    ("tag", "lang"),
    [
        ("zh", "zh"), ("zh_CN.UTF-8", "zh"), ("zh-Hans-CN", "zh"), ("zh_TW", "zh"), ("Chinese (Simplified)_China", "zh"),
        ("en-US", "en"), ("English_United States", "en"), ("C.UTF-8", None), ("", None), ("fr_FR", None),
    ],
)  # fmt: skip
def test_language_of_tags(tag: str, lang: str | None) -> None:
    assert i18n.language_of(tag) == lang
    assert i18n.is_chinese(tag) == (lang == "zh")


def test_system_language_follows_the_preferences_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    assert i18n.resolve_language("zh", ["en-US"]) == "zh"
    assert i18n.resolve_language("system", ["fr-FR", "zh-Hans-CN", "en"]) == "zh"  # first one WeClaw has
    assert i18n.resolve_language("system", ["fr-FR"]) == "en"
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert i18n.resolve_language("system") == "zh"
    monkeypatch.setenv("LANGUAGE", "en_GB:zh")
    assert i18n.resolve_language("system") == "en"


def test_has_chinese() -> None:
    assert i18n.has_chinese("发送 report.pdf") and not i18n.has_chinese("send report.pdf")
