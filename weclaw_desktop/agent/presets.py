"""Provider presets: OpenAI-compatible endpoints users pick from a list instead of typing URLs.

``known_models`` are suggestions shown when the endpoint has no ``/models`` listing (or it fails);
the model list itself comes from the endpoint whenever it answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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


PRESETS: dict[str, Preset] = {
    p.key: p
    for p in [
        Preset(
            "openai",
            "OpenAI",
            "https://api.openai.com/v1",
            "gpt-4o-mini",
            key_url="https://platform.openai.com/api-keys",
            known_models=("gpt-4o-mini", "gpt-4o", "gpt-4.1", "gpt-4.1-mini"),
        ),
        Preset(
            "deepseek",
            "DeepSeek 深度求索",
            "https://api.deepseek.com/v1",
            "deepseek-chat",
            key_url="https://platform.deepseek.com/api_keys",
            known_models=("deepseek-chat", "deepseek-reasoner"),
        ),
        Preset(
            "qwen",
            "Qwen 通义千问 (DashScope)",
            "https://dashscope.aliyuncs.com/compatible-mode/v1",
            "qwen-plus",
            key_url="https://dashscope.console.aliyun.com/apiKey",
            known_models=("qwen-plus", "qwen-max", "qwen-turbo"),
        ),
        Preset(
            "qwen_intl",
            "Qwen (DashScope international)",
            "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
            "qwen-plus",
            known_models=("qwen-plus", "qwen-max", "qwen-turbo"),
            label_zh="Qwen 通义千问（DashScope 国际版）",
        ),
        Preset(
            "zhipu",
            "Zhipu GLM 智谱",
            "https://open.bigmodel.cn/api/paas/v4",
            "glm-4-flash",
            has_models_endpoint=False,
            key_url="https://open.bigmodel.cn/usercenter/apikeys",
            known_models=("glm-4-flash", "glm-4-plus", "glm-4-air"),
        ),
        Preset(
            "moonshot",
            "Moonshot Kimi 月之暗面",
            "https://api.moonshot.cn/v1",
            "moonshot-v1-8k",
            key_url="https://platform.moonshot.cn/console/api-keys",
            known_models=("moonshot-v1-8k", "moonshot-v1-32k", "kimi-k2-0905-preview"),
        ),
        Preset(
            "siliconflow",
            "SiliconFlow 硅基流动",
            "https://api.siliconflow.cn/v1",
            "Qwen/Qwen2.5-7B-Instruct",
            key_url="https://cloud.siliconflow.cn/account/ak",
            known_models=("Qwen/Qwen2.5-7B-Instruct", "deepseek-ai/DeepSeek-V3"),
        ),
        Preset(
            "openrouter",
            "OpenRouter",
            "https://openrouter.ai/api/v1",
            "openai/gpt-4o-mini",
            key_url="https://openrouter.ai/keys",
            known_models=("openai/gpt-4o-mini", "anthropic/claude-3.5-sonnet"),
        ),
        Preset(
            "ollama",
            "Ollama (local)",
            "http://localhost:11434/v1",
            "qwen2.5:7b",
            needs_key=False,
            label_zh="Ollama（本地）",
        ),
        Preset(
            "lmstudio",
            "LM Studio (local)",
            "http://localhost:1234/v1",
            "",
            needs_key=False,
            label_zh="LM Studio（本地）",
        ),
        Preset("custom", "Custom OpenAI-compatible", "", ""),
    ]
}


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
