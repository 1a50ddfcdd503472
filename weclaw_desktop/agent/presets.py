"""Provider presets: OpenAI-compatible endpoints users pick from a list instead of typing URLs.

A preset is the user-facing part of a provider profile (``resources/providers.toml``, one declaration per
provider): label, base URL, key page, suggested models. ``known_models`` are suggestions shown when the endpoint
has no ``/models`` listing (or it fails); the model list itself comes from the endpoint whenever it answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from weclaw_desktop.agent.provider.profiles import Profile, profiles
from weclaw_desktop.i18n import has_chinese, is_chinese


@dataclass(frozen=True)
class Preset:
    key: str
    label: str
    base_url: str
    default_model: str = ""
    needs_key: bool = True
    has_models_endpoint: bool = True
    stream_usage: bool = True  # accepts stream_options={"include_usage": true}
    key_url: str = ""  # where users get a key
    known_models: tuple[str, ...] = field(default_factory=tuple)
    label_zh: str = ""  # the Chinese label when it is not just ``label`` (which may carry the Chinese name)

    def short_label(self, lang: str) -> str:
        """The label for one language: "DeepSeek 深度求索" stays whole in Chinese, is "DeepSeek" in English."""
        if is_chinese(lang):
            return self.label_zh or self.label
        words = [w for w in self.label.split() if not has_chinese(w)]
        return " ".join(words) or self.label


def _preset(profile: Profile) -> Preset:
    names = [m for m in profile.models.known if not any(ch in m for ch in "*?[")]
    if profile.default_model and profile.default_model not in names:
        names.insert(0, profile.default_model)
    return Preset(
        key=profile.key,
        label=profile.label,
        base_url=profile.base_url,
        default_model=profile.default_model,
        needs_key=profile.needs_key,
        has_models_endpoint=profile.models.listing != "none",
        stream_usage=profile.stream_usage,
        key_url=profile.key_url,
        known_models=tuple(names),
        label_zh=profile.label_zh,
    )


PRESETS: dict[str, Preset] = {key: _preset(p) for key, p in profiles().items()}


def get_preset(key: str) -> Preset:
    """The preset ``key``; unknown or empty keys give the custom preset."""
    return PRESETS.get(key) or PRESETS["custom"]


def preset_for_url(base_url: str) -> Preset:
    """The preset whose base URL matches, else custom (used when only a URL was given)."""
    url = base_url.rstrip("/")
    for preset in PRESETS.values():
        if preset.base_url and preset.base_url.rstrip("/") == url:
            return preset
    return PRESETS["custom"]
