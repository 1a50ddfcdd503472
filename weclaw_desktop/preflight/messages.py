"""The preflight's messages in English and Chinese (printed before Qt and the UI's translations exist).

The language follows the locale variables (``LC_ALL``, ``LC_MESSAGES``, ``LANG``, ``LANGUAGE``): Chinese
when they say ``zh``, else English.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

MESSAGES: dict[str, dict[str, str]] = {
    "no_display": {
        "en": "WeClaw cannot open its window: there is no display here (DISPLAY and WAYLAND_DISPLAY are not set). "
        "In a terminal, use `weclaw chat`; or start WeClaw from a desktop session "
        "(over SSH: `ssh -X`, or run it under `xvfb-run`).",
        "zh": "WeClaw 无法打开窗口：这里没有图形显示（DISPLAY 和 WAYLAND_DISPLAY 都未设置）。"
        "在终端中请使用 `weclaw chat`；或在桌面会话中启动 WeClaw（通过 SSH 时使用 `ssh -X`，或用 `xvfb-run` 运行）。",
    },
    "display_unreachable": {
        "en": "WeClaw cannot open its window: {details}. Check that the desktop session is running and that you "
        "may use it (over SSH: `ssh -X`); or use `weclaw chat` in the terminal.",
        "zh": "WeClaw 无法打开窗口：{details}。请确认桌面会话正在运行且您有权使用（通过 SSH 时使用 `ssh -X`）；"
        "或在终端中使用 `weclaw chat`。",
    },
    "libs_missing": {
        "en": "WeClaw cannot start its window: this system lacks {what} ({names}). Install them with "
        "`sudo apt install {deb}` (Debian/Ubuntu) or `sudo dnf install {rpm}` (Fedora/RHEL). "
        "Until then `weclaw chat` works in the terminal.",
        "zh": "WeClaw 无法启动窗口：系统缺少 {what}（{names}）。请安装：`sudo apt install {deb}`（Debian/Ubuntu）"
        "或 `sudo dnf install {rpm}`（Fedora/RHEL）。在此之前可在终端中使用 `weclaw chat`。",
    },
    "libs_unknown": {
        "en": "Your distribution's package search can tell which packages provide: {names}.",
        "zh": "以下库所在的软件包可用发行版的软件包搜索查到：{names}。",
    },
    "libs_broken": {
        "en": "WeClaw cannot start its window: a system library does not load ({error}).",
        "zh": "WeClaw 无法启动窗口：某个系统库无法加载（{error}）。",
    },
    "no_fonts": {
        "en": "WeClaw cannot show text: no fonts are installed, so every label would be an empty box. "
        "Install fonts with `sudo apt install fonts-noto-core fonts-noto-cjk` (Debian/Ubuntu) or "
        "`sudo dnf install google-noto-sans-fonts google-noto-sans-cjk-fonts` (Fedora/RHEL).",
        "zh": "WeClaw 无法显示文字：系统没有安装任何字体，所有文字都会显示为方框。"
        "请安装字体：`sudo apt install fonts-noto-core fonts-noto-cjk`（Debian/Ubuntu）或 "
        "`sudo dnf install google-noto-sans-fonts google-noto-sans-cjk-fonts`（Fedora/RHEL）。",
    },
    "fonts_unchecked": {
        "en": "fonts cannot be checked: fontconfig does not load here ({error}); the Qt libraries line names what is missing",
        "zh": "无法检查字体：fontconfig 无法加载（{error}）；缺少的库见 Qt 库一项",
    },
    "no_cjk": {
        "en": "no font covers Chinese, so Chinese text shows as boxes: install fonts-noto-cjk (Debian/Ubuntu) "
        "or google-noto-sans-cjk-fonts (Fedora/RHEL)",
        "zh": "没有支持中文的字体，中文会显示为方框：请安装 fonts-noto-cjk（Debian/Ubuntu）"
        "或 google-noto-sans-cjk-fonts（Fedora/RHEL）",
    },
}


def language(environ: Mapping[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    for name in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = env.get(name, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def say(key: str, *, environ: Mapping[str, str] | None = None, **values: str) -> str:
    return MESSAGES[key][language(environ)].format(**values)
