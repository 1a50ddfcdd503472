"""The provenance rule is data: tools.json declares trust, effects and path classes; the validator checks
them; the classifier and the "written by the user" test behave as declared (#13 item 1).

What must survive: a typo in a declaration fails ``weclaw validate`` with where it is; every built-in tool
declares its safety; paths are classified the same whatever the spelling or symlink, per platform; a URL
the model built is never "the user's".
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from helpers import base_manifest

from weclaw_desktop.paths import tools_json_path
from weclaw_desktop.toolkit.effects import SafetyModel
from weclaw_desktop.toolkit.manifest import Effect, Manifest, ManifestError, parse_manifest
from weclaw_desktop.toolkit.pathclass import PathClassifier, Places
from weclaw_desktop.toolkit.provenance import Provenance
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.toolkit.validator import validate_manifest


def _real() -> dict:
    return json.loads(Path(tools_json_path()).read_text(encoding="utf-8"))


def test_the_real_tools_json_declares_every_tool() -> None:
    report = validate_manifest(parse_manifest(Path(tools_json_path()).read_text(encoding="utf-8")))
    check = report.by_name("safety")
    assert check.level.value == "pass", check.detail


def test_an_undeclared_tool_is_a_warning_and_a_bad_declaration_fails() -> None:
    data = base_manifest()
    report = validate_manifest(Manifest.model_validate(data))
    assert report.by_name("safety").level.value == "warn"
    data["tools"]["echo"]["safety"] = {
        "effects": [{"effect": "persists", "paths_in": ["nowhere"], "args": ["pth"]}],
        "summary": {"en": "say {shape:text}"},
    }
    detail = validate_manifest(Manifest.model_validate(data)).by_name("safety").detail
    assert "unknown path class 'nowhere'" in detail
    assert "argument 'pth'" in detail and "unknown fact 'shape'" in detail


def test_a_misspelt_effect_key_names_the_closest_one() -> None:
    data = _real()
    data["tools"]["web"]["safety"]["actions"]["fetch"]["efects"] = []
    with pytest.raises(ManifestError) as exc:
        parse_manifest(json.dumps(data))
    assert "did you mean 'effects'" in str(exc.value)
    bad = copy.deepcopy(_real())
    bad["tools"]["web"]["safety"]["actions"]["fetch"]["effects"] = [{"effect": "leaks"}]
    with pytest.raises(ManifestError):
        parse_manifest(json.dumps(bad))


def test_effects_follow_the_arguments(home: Path) -> None:
    model = SafetyModel(ToolRegistry.from_path(tools_json_path()))
    user = Provenance(user_text=["please read example.com/news and https://Docs.Example.org/a?x=1#top"])
    effects = lambda tool, action, **a: [h.effect for h in model.effects(tool, action, a, user)]  # noqa: E731
    assert effects("file", "append", path="~/notes.txt", content="x") == []
    assert effects("file", "append", path="~/.bashrc", content="x") == [Effect.PERSISTS]
    assert effects("file", "write", path="~/code/app/.git/hooks/pre-commit", content="x") == [Effect.PERSISTS]
    assert effects("file", "read", path="~/.config/gh/hosts.yml") == [Effect.READS_PRIVATE_DATA]
    assert effects("file", "read", path="~/project/.env") == [Effect.READS_PRIVATE_DATA]
    assert effects("web", "fetch", url="https://example.com/news") == []  # the user wrote it (no scheme)
    assert effects("web", "fetch", url="http://docs.example.org/a?x=1") == []
    assert effects("web", "fetch", url="https://example.com/news?d=gho_x") == [Effect.SENDS_DATA_OUT]
    assert effects("web", "fetch", url="https://attacker.example/c") == [Effect.SENDS_DATA_OUT]
    assert effects("remote_file_share", "send_file", path="~/a.pdf") == [Effect.SENDS_DATA_OUT]
    assert set(effects("shell", "run", command="ls")) == {Effect.SENDS_DATA_OUT, Effect.PERSISTS}


def test_spellings_and_links_classify_the_same(home: Path) -> None:
    model = SafetyModel(ToolRegistry.from_path(tools_json_path()))
    (home / "dots").symlink_to(home, target_is_directory=True)
    (home / ".bashrc").write_text("")
    for spelling in ["~/.bashrc", "~/x/../.bashrc", str(home) + "//.bashrc", ".bashrc", "~/dots/.bashrc"]:
        assert model.classifier.in_class(spelling, "persistence"), spelling
    assert not model.classifier.in_class("~/bashrc-notes.txt", "persistence")


@pytest.mark.parametrize(
    ("platform", "path", "cls"),
    [
        ("darwin", "~/Library/LaunchAgents/com.evil.plist", "persistence"),
        ("win32", "~/AppData/Roaming/Microsoft/Windows/Start Menu/Programs/Startup/run.lnk", "persistence"),
        ("win32", "~/Documents/PowerShell/Microsoft.PowerShell_profile.ps1", "persistence"),
        ("linux", "~/.config/autostart/x.desktop", "persistence"),
        ("linux", "~/.config/systemd/user/x.service", "persistence"),
    ],
)
def test_platform_classes(home: Path, platform: str, path: str, cls: str) -> None:
    classes = parse_manifest(Path(tools_json_path()).read_text(encoding="utf-8")).safety.paths
    classifier = PathClassifier(classes, Places.default(), home=home, platform=platform)
    assert classifier.in_class(path, cls)


def test_the_phone_folder_makes_results_untrusted(home: Path) -> None:
    incoming = home / "phone-in"
    model = SafetyModel(ToolRegistry.from_path(tools_json_path()), Places.default(incoming=incoming))
    assert model.trust("file", "read", {"path": str(incoming / "a.txt")}).value == "untrusted"
    assert model.trust("file", "read", {"path": "~/a.txt"}).value == "trusted"
    assert model.trust("web", "fetch", {"url": "https://example.com"}).value == "untrusted"
    assert model.trust("clipboard", "read", {}).value == "untrusted"
    assert model.trust("clipboard", "write", {"text": "x"}).value == "trusted"


def test_pasted_urls_and_model_built_urls_are_not_the_users() -> None:
    prov = Provenance(user_text=["summarise https://news.example/today"])
    assert prov.user_wrote("https://news.example/today")
    assert not prov.user_wrote("https://news.example/today?x=secret")
    assert not prov.user_wrote("https://news.example.evil.com/today")
    assert not prov.user_wrote("")
