"""A small translation table (zh and en) for the GUI; no Qt lrelease tooling.

``tr("key", name=...)`` looks the key up in the active language and formats it. The language follows the
system by default (``resolve_language("system")`` reads the Qt locale); Settings may force one. A key
missing from the table is a bug: it is returned as-is so it shows up, and a test checks the table.
"""

from __future__ import annotations

from collections.abc import Mapping

_lang = "en"

# key -> (en, zh)
TABLE: dict[str, tuple[str, str]] = {
    "common.cancel": ("Cancel", "取消"),
    "common.save": ("Save", "保存"),
    "common.ok": ("OK", "确定"),
    # app and main window
    "app.name": ("WeClaw", "WeClaw"),
    "app.already_running": ("WeClaw is already running.", "WeClaw 已经在运行。"),
    "action.new_chat": ("New chat", "新对话"),
    "action.settings": ("Settings", "设置"),
    "action.phone": ("Phone", "手机"),
    "action.phone.tip": ("Pair a phone and send files to it", "配对手机并向其发送文件"),
    "action.tools": ("Tools", "工具"),
    "action.quit": ("Quit", "退出"),
    "action.show": ("Show WeClaw", "显示 WeClaw"),
    "action.hide": ("Hide WeClaw", "隐藏 WeClaw"),
    "tray.still_running": (
        "WeClaw keeps running in the tray. Quit it from the tray menu.",
        "WeClaw 仍在托盘中运行，可从托盘菜单退出。",
    ),
    # sessions sidebar
    "sessions.title": ("Chats", "对话"),
    "sessions.search": ("Search chats", "搜索对话"),
    "sessions.new": ("New chat", "新对话"),
    "sessions.rename": ("Rename", "重命名"),
    "sessions.delete": ("Delete", "删除"),
    "sessions.untitled": ("New chat", "新对话"),
    "sessions.delete_confirm": ("Delete “{title}” and its messages?", "删除“{title}”及其全部消息？"),
    "sessions.empty": ("No chats yet", "还没有对话"),
    "sessions.no_match": ("No chat matches", "没有匹配的对话"),
    # chat
    "chat.you": ("You", "你"),
    "chat.assistant": ("WeClaw", "WeClaw"),
    "chat.placeholder": ("Ask WeClaw to do something…", "让 WeClaw 帮你做点什么…"),
    "chat.keys": (
        "Enter sends · Shift+Enter adds a line · drop files here to attach them",
        "Enter 发送 · Shift+Enter 换行 · 拖入文件即可附加",
    ),
    "chat.send": ("Send", "发送"),
    "chat.stop": ("Stop", "停止"),
    "chat.attached": ("Attached files:", "附加的文件："),
    "chat.remove_attachment": ("Remove", "移除"),
    "chat.stopped": ("Stopped.", "已停止。"),
    "chat.error": ("Error: {message}", "出错：{message}"),
    "chat.done.max_rounds": ("Stopped after too many steps.", "步骤过多，已停止。"),
    "chat.done.loop_guard": ("Stopped: the same call repeated.", "已停止：同一调用重复了多次。"),
    "chat.welcome": ("What can I do for you?", "有什么可以帮你？"),
    "chat.welcome.sub": (
        "I can work with files, the clipboard, screenshots, the web and more. Every tool call shows up here.",
        "我可以处理文件、剪贴板、截图、网页等。每一次工具调用都会显示在这里。",
    ),
    "chat.no_provider_send": ("Set up a model provider first.", "请先设置模型服务。"),
    # setup panel
    "setup.title": ("Connect a model to get started", "连接一个模型即可开始"),
    "setup.body": (
        "WeClaw talks to any OpenAI-compatible service: OpenAI, DeepSeek, Qwen, GLM, Kimi, or a local "
        "Ollama / LM Studio. Choose one in Settings and paste your API key; it is kept in the system keyring.",
        "WeClaw 可以连接任何兼容 OpenAI 接口的服务：OpenAI、DeepSeek、通义千问、智谱 GLM、Kimi，"
        "或本地的 Ollama / LM Studio。在设置中选择一个并填入 API 密钥，密钥保存在系统钥匙串中。",
    ),
    "setup.open": ("Set up a provider…", "设置模型服务…"),
    "setup.rest": (
        "Meanwhile the tool panel, settings and phone link all work.",
        "在此之前，工具面板、设置和手机连接都可以正常使用。",
    ),
    # tool cards
    "card.arguments": ("Arguments", "参数"),
    "card.result": ("Result", "结果"),
    "card.open": ("Open", "打开"),
    "card.reveal": ("Show in folder", "在文件夹中显示"),
    "card.send_phone": ("Send to phone", "发送到手机"),
    "card.send_phone.unpaired": ("Pair a phone first (toolbar → Phone)", "请先配对手机（工具栏 → 手机）"),
    "card.sent_phone": ("Sent to phone", "已发送到手机"),
    "card.files": ("Files", "文件"),
    "card.more_lines": ("… {n} more lines", "… 还有 {n} 行"),
    "card.approve_hint": ("Waiting for your approval", "等待你的批准"),
    # call status
    "status.queued": ("Queued", "排队中"),
    "status.awaiting_approval.short": ("Needs approval", "等待批准"),
    "status.awaiting_approval": ("Waiting for approval", "等待批准"),
    "status.running": ("Running", "运行中"),
    "status.success": ("Succeeded", "成功"),
    "status.error": ("Failed", "失败"),
    "status.timeout": ("Timed out", "超时"),
    "status.denied": ("Denied", "已拒绝"),
    "status.cancelled": ("Cancelled", "已取消"),
    # tool panel
    "panel.title": ("Tool panel", "工具面板"),
    "panel.tab.tools": ("Tools", "工具"),
    "panel.tab.calls": ("Calls", "调用记录"),
    "panel.filter": ("Filter tools", "筛选工具"),
    "panel.counter": ("{calls} calls · {running} running", "共 {calls} 次调用 · {running} 个运行中"),
    "panel.summary": ("{available} of {total} available", "{available}/{total} 可用"),
    "panel.state.exposed": ("Offered now", "本次提供"),
    "panel.state.available": ("Available", "可用"),
    "panel.state.hidden": ("Unavailable", "不可用"),
    "panel.state.off": ("Switched off", "已关闭"),
    "panel.switch.tip": ("Switch this tool on or off", "开启或关闭此工具"),
    "panel.tip.exposed": ("Offered to the model for the current request.", "已在当前请求中提供给模型。"),
    "panel.tip.available": ("Ready. Offered when a request needs it.", "就绪。请求需要时会提供给模型。"),
    "panel.tip.off": (
        "You switched this tool off. Tick the box to turn it back on.",
        "你已关闭此工具，勾选即可重新开启。",
    ),
    "panel.tip.why": ("Why: {reason}", "原因：{reason}"),
    "panel.tip.todo": ("What to do: {hint}", "解决办法：{hint}"),
    "panel.tip.calls": ("Calls this session: {n}", "本会话调用次数：{n}"),
    "panel.calls.when": ("Time", "时间"),
    "panel.calls.function": ("Function", "函数"),
    "panel.calls.status": ("Status", "状态"),
    "panel.calls.duration": ("Duration", "耗时"),
    "panel.calls.error": ("Error", "错误"),
    "panel.calls.empty": ("No calls yet", "暂无调用"),
    "category.meta": ("Assistant", "助手"),
    "category.files": ("Files", "文件"),
    "category.system": ("System", "系统"),
    "category.web": ("Web", "网络"),
    "category.desktop": ("Desktop", "桌面"),
    "category.productivity": ("Productivity", "效率"),
    "category.communication": ("Communication", "通讯"),
    "category.mcp": ("MCP servers", "MCP 服务器"),
    "category.general": ("General", "通用"),
    "panel.calls.refresh": ("Refresh", "刷新"),
    # diagnostics (code -> what it means / what to do)
    "diag.bridge-missing": ("A service it needs is not running", "所需的服务未运行"),
    "diag.config-missing": ("A setting is missing", "缺少配置"),
    "diag.auth-missing": ("A credential is missing", "缺少凭据"),
    "diag.env-missing": ("An environment variable is missing", "缺少环境变量"),
    "diag.dependency-missing": ("An optional package is missing", "缺少可选组件"),
    "diag.platform-unsupported": ("Not for this system", "不支持此系统"),
    "diag.disabled-by-policy": ("Blocked by the tool policy", "被工具策略禁止"),
    "diag.disabled-by-user": ("Switched off by you", "已被你关闭"),
    "diag.disabled-in-manifest": ("Not included", "未包含"),
    "diag.circuit-open": ("Paused after repeated failures", "多次失败后暂停"),
    "diag.load-failed": ("Failed to load", "加载失败"),
    "diag.server-unavailable": ("Server unavailable", "服务器不可用"),
    "diag.bridge-missing.hint": (
        "It starts with the desktop window; if it stays missing, restart WeClaw.",
        "它随桌面窗口启动；若一直缺失，请重启 WeClaw。",
    ),
    "diag.config-missing.hint": ("Fill in the missing setting in Settings.", "请在设置中补全缺少的配置。"),
    "diag.auth-missing.hint": ("Add the credential in Settings.", "请在设置中添加凭据。"),
    "diag.env-missing.hint": ("Set the environment variable and restart WeClaw.", "请设置该环境变量后重启 WeClaw。"),
    "diag.dependency-missing.hint": ("Install the optional package, then restart.", "请安装该可选组件后重启。"),
    "diag.platform-unsupported.hint": ("Not available on this operating system.", "此操作系统不支持。"),
    "diag.disabled-by-policy.hint": (
        "Change the tool profile or allow list in Settings.",
        "请在设置中调整工具配置或允许列表。",
    ),
    "diag.disabled-by-user.hint": ("Tick the box next to it to switch it on.", "勾选旁边的复选框即可开启。"),
    "diag.disabled-in-manifest.hint": (
        "Not included in this version of WeClaw.",
        "此版本的 WeClaw 未包含该工具。",
    ),
    "diag.circuit-open.hint": (
        "It failed repeatedly; it is back in the next request.",
        "连续失败多次，下一个请求会恢复。",
    ),
    "diag.load-failed.hint": (
        "The tool is broken on this installation; see the log.",
        "该工具在本机安装有问题，请查看日志。",
    ),
    "diag.server-unavailable.hint": ("Check the server in Settings.", "请在设置中检查该服务器。"),
    # status bar
    "statusbar.no_provider": ("No model set up", "未设置模型"),
    "statusbar.tokens": ("{n} tokens", "{n} tokens"),
    "statusbar.tokens.tip": ("Tokens used in this chat", "本对话已使用的 token 数"),
    "phone.off": ("Phone link off", "手机连接未开启"),
    "phone.waiting": ("Phone link on", "手机连接已开启"),
    "phone.connected": ("Phone connected", "手机已连接"),
    "phone.error": ("Phone link error", "手机连接出错"),
    "phone.waiting_pairing": ("Phone link on · no phone connected", "手机连接已开启 · 暂无手机连接"),
    "phone.connected_one": ("Phone connected: {name}", "手机已连接：{name}"),
    "phone.connected_n": ("{n} phones connected", "已连接 {n} 部手机"),
    "phone.a_phone": ("the phone", "手机"),
    "phone.received": ("Received {name} from {device}, saved to {path}", "已从{device}收到 {name}，保存在 {path}"),
    "phone.received.title": ("File from your phone", "来自手机的文件"),
    "phone.received.tray": ("{name} was saved on this computer", "{name} 已保存到这台电脑"),
    "phone.send.no_device": (
        "No phone is paired. Open Phone in the toolbar and scan the code first.",
        "还没有配对手机。请先点工具栏的「手机」并扫描二维码。",
    ),
    "phone.send.offered": ("Sending {names} to {device}…", "正在发送 {names} 到 {device}…"),
    "phone.send.done": ("{names} saved on {device}", "{names} 已保存到 {device}"),
    "phone.send.ready": (
        "{names} is on {device}: tap Save on the phone to keep it",
        "{names} 已在 {device} 上：请在手机上点“保存”",
    ),
    "phone.send.failed": ("Could not send {names} to the phone: {reason}", "无法发送 {names} 到手机：{reason}"),
    "phone.send.timeout": (
        "the phone did not download it in time (is the WeClaw page open on the phone?)",
        "手机没有及时下载（手机上的 WeClaw 页面是否开着？）",
    ),
    # approval
    "approval.title": ("Allow this action?", "允许此操作吗？"),
    "approval.body": ("WeClaw wants to run {tool} → {action}.", "WeClaw 想要运行 {tool} → {action}。"),
    "approval.risk": ("Risk: {risk}", "风险：{risk}"),
    "approval.origin": ("Requested from: {origin}", "请求来源：{origin}"),
    "approval.arguments": ("Arguments", "参数"),
    "approval.reason": ("Why you are asked: {reason}", "询问原因：{reason}"),
    "approval.allow_once": ("Allow once", "允许一次"),
    "approval.allow_session": ("Allow for this chat", "本次对话内允许"),
    "approval.deny": ("Deny", "拒绝"),
    "risk.low": ("low", "低"),
    "risk.medium": ("medium", "中"),
    "risk.high": ("high", "高"),
    "origin.gui": ("this window", "本窗口"),
    "origin.cli": ("the command line", "命令行"),
    "origin.companion": ("your phone", "你的手机"),
    "origin.schedule": ("a schedule", "定时任务"),
    # settings
    "settings.title": ("Settings", "设置"),
    "settings.page.provider": ("Model", "模型"),
    "settings.page.agent": ("Assistant", "助手"),
    "settings.page.approvals": ("Approvals", "审批"),
    "settings.page.files": ("Files", "文件"),
    "settings.page.appearance": ("Appearance", "外观"),
    "settings.preset": ("Provider", "服务商"),
    "settings.base_url": ("Base URL", "接口地址"),
    "settings.model": ("Model", "模型"),
    "settings.fetch_models": ("Fetch list", "获取列表"),
    "settings.models_fetched": ("{n} models found", "找到 {n} 个模型"),
    "settings.api_key": ("API key", "API 密钥"),
    "settings.api_key.placeholder": ("Paste your API key", "粘贴你的 API 密钥"),
    "settings.api_key.stored": ("A key is stored. Type a new one to replace it.", "已保存密钥。输入新的密钥可替换。"),
    "settings.api_key.clear": ("Remove key", "删除密钥"),
    "settings.keyring.backend": ("Stored in: {backend}", "保存位置：{backend}"),
    "settings.keyring.none": (
        "No system keyring is available, so the key is kept only until WeClaw quits. "
        "Install and unlock a keyring (GNOME Keyring, KWallet, macOS Keychain, Windows Credential Manager), "
        "or set the WECLAW_API_KEY environment variable.",
        "系统钥匙串不可用，密钥只保存到 WeClaw 退出为止。"
        "请安装并解锁钥匙串（GNOME Keyring、KWallet、macOS 钥匙串、Windows 凭据管理器），"
        "或设置环境变量 WECLAW_API_KEY。",
    ),
    "settings.key_saved": ("Key saved to the keyring.", "密钥已保存到钥匙串。"),
    "settings.key_session": ("Key kept for this session only.", "密钥仅在本次运行中保留。"),
    "settings.test": ("Test connection", "测试连接"),
    "settings.testing": ("Testing…", "正在测试…"),
    "settings.test_ok": ("Connected. {n} models available.", "连接成功，可用模型 {n} 个。"),
    "settings.test_fail": ("Failed: {message}", "失败：{message}"),
    "settings.need_url": ("Enter a base URL first.", "请先填写接口地址。"),
    "settings.exposure": ("Tool exposure", "工具提供方式"),
    "settings.exposure.progressive": ("Only the tools a request needs (recommended)", "仅提供请求需要的工具（推荐）"),
    "settings.exposure.all": ("All available tools every time", "每次提供全部可用工具"),
    "settings.max_rounds": ("Maximum steps per request", "每个请求的最大步骤数"),
    "settings.approval.rules": ("Ask before running", "运行前询问"),
    "settings.approval.origin": ("Request from", "请求来源"),
    "settings.rule.allow": ("Allow", "允许"),
    "settings.rule.ask": ("Ask", "询问"),
    "settings.rule.deny": ("Deny", "拒绝"),
    "settings.remembered": ("Always allowed", "始终允许"),
    "settings.remembered.none": ("Nothing is always allowed.", "没有始终允许的项目。"),
    "settings.revoke": ("Revoke", "撤销"),
    "settings.roots": ("Folders tools may use", "工具可访问的文件夹"),
    "settings.roots.home": ("Empty list: your home folder.", "列表为空时：你的主文件夹。"),
    "settings.add": ("Add…", "添加…"),
    "settings.remove": ("Remove", "移除"),
    "settings.outputs": ("Folder for created files", "生成文件的保存位置"),
    "settings.browse": ("Browse…", "浏览…"),
    "settings.language": ("Language", "语言"),
    "settings.language.system": ("Same as the system", "跟随系统"),
    "settings.theme": ("Theme", "主题"),
    "settings.theme.system": ("Same as the system", "跟随系统"),
    "settings.theme.light": ("Light", "浅色"),
    "settings.theme.dark": ("Dark", "深色"),
    "settings.close_to_tray": ("Keep running in the tray when the window is closed", "关闭窗口时在托盘中继续运行"),
    "settings.restart_note": ("Language changes apply to new windows.", "语言更改将在新窗口中生效。"),
    "settings.saved": ("Settings saved.", "设置已保存。"),
    "settings.invalid": ("Cannot save: {message}", "无法保存：{message}"),
    "settings.custom": ("Custom", "自定义"),
}


def set_language(lang: str) -> None:
    global _lang
    _lang = "zh" if lang.startswith("zh") else "en"


def language() -> str:
    return _lang


def tr(key: str, **kwargs: object) -> str:
    pair = TABLE.get(key)
    if pair is None:
        return key
    text = pair[1] if _lang == "zh" and pair[1] else pair[0]
    return text.format(**kwargs) if kwargs else text


def pick(texts: Mapping[str, str] | object) -> str:
    """The active language's entry of a ``{"en": ..., "zh": ...}`` mapping or a LocalizedText."""
    get = getattr(texts, "get", None)
    if get is None:
        return str(texts)
    if isinstance(texts, Mapping):
        return str(texts.get(_lang) or texts.get("en") or "")
    return str(get(_lang))


def resolve_language(setting: str) -> str:
    """``"en"``/``"zh"`` from a settings value; ``"system"`` follows the system locale."""
    if setting in ("en", "zh"):
        return setting
    from PySide6.QtCore import QLocale

    for name in QLocale.system().uiLanguages():
        return "zh" if name.lower().startswith("zh") else "en"
    return "zh" if QLocale.system().name().lower().startswith("zh") else "en"
