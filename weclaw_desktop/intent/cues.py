"""Language cues that hold for every intent: how a clause is phrased, and whether it is about the user's own
things. They are properties of how people talk in Chinese and English, not of any tool, so they live here
and not in tools.json (which holds what each tool is asked for: its action phrases and topic words).

:mod:`forms` reads these cues per clause and decides the clause's form (a request, a knowledge question,
an advice question, a yes/no question, a writing request, a negation, a social turn); the engine weighs
the clause's keyword and similarity evidence by that form. The numbers are in :mod:`forms`.

Every cue kind is its own matcher layer, so a cue never hides an intent keyword or a cue of another kind
(only a longer cue of the same kind hides a shorter one inside it).
"""

from __future__ import annotations

from weclaw_desktop.intent.matcher import KeywordMatcher

KNOWLEDGE = "knowledge"  # why / what is / explain / the difference between: the model answers
HOWTO = "howto"  # how do I / how to / 怎么 / 如何: instructions, the model answers
ADVICE = "advice"  # should I / which is better / is it worth / 好用吗 / 够用吗: an opinion, the model answers
EVALUATE = "evaluate"  # 够用吗 / enough?: about the user's thing when it points at one, else an opinion
REQUEST_VERB = "request_verb"  # an action verb that takes the question as its object ("google how to ...")
REQUEST = "request"  # phrased as a request ("can you", "帮我", "please"): undoes the yes/no form
CURRENT = "current"  # about the world as it is now: the model's own knowledge is out of date
NEUTRAL = "neutral"  # holds a question word but complains or asks about the user's world ("怎么这么慢")
COMPOSE = "compose"  # asking the model to write or rework text
NEGATION = "negation"  # "don't", "先别", "不用": the clause's action is not wanted (now)
DEFERRAL = "deferral"  # "not yet", "let me check first", "等我看完再": not now
POSSESSIVE = "possessive"  # my / 我的 / 我电脑: counts only when it points at an object (see forms)
DEMONSTRATIVE = "demonstrative"  # this / that / 这个 / 那个: likewise
OBJECT = "object"  # things on this computer tools act on: the screen, the clipboard, files, the phone, ...
LOCATIVE = "locative"  # "in the", "on my", "里", "上": the contents of a container ("剪贴板里是什么")
MACHINE = "machine"  # parts of this computer: a yes/no question about one asks about the user's ("D盘快满了吗")
CONTAINER = "container"  # objects with contents a locative can point into: the screen, the clipboard, a folder
PAST = "past"  # "we talked about", "you told me", "上次聊": about this user's own conversations
CONTINUE = "continue"  # "again", "the same", "也", "再来": a follow-up that repeats the previous need
EDIT = "edit"  # "add a line", "make it handle …", "改成…": at the start of a follow-up about what the assistant wrote
ELSEWHERE = "elsewhere"  # another device between a deictic and an object: "my phone battery" is not this computer's
ATTRIBUTE = "attribute"  # "显卡是什么型号": what the question asks of a thing on this computer
ABOUT = "about"  # "a poem about …", "关于…的": in a writing request, what follows is its subject, not an action

# fmt: off
CUES: dict[str, list[str]] = {
    HOWTO: [
        "怎么", "怎样", "如何", "怎么写", "怎么用", "怎么说", "咋", "how do", "how does", "how can i", "how can you", "how to",
        "how would", "how should", "can i", "is it possible", "teach me", "what's the command", "what is the command",
        "which command", "the command to", "the command for", "what's the syntax", "什么命令", "用什么命令", "命令是什么",
    ],
    KNOWLEDGE: [
        # zh
        "为什么", "为啥", "是什么", "什么是", "什么意思", "啥意思", "啥是", "区别", "原理", "解释一下", "解释下", "介绍一下",
        "讲讲", "讲一讲", "科普", "是不是真的", "有什么用", "什么叫", "咋回事", "怎么回事", "名词解释", "定义", "是啥", "快捷键",
        "有啥区别", "有什么区别", "不同", "有啥不同", "有什么不同", "差别", "异同", "会不会", "一般是", "通常", "a typical", "typically", "usually", "on average", "origin of", "etymology", "what s * for", "what is * for", "是干什么的", "是干嘛的", "干嘛的", "做什么的", "干什么用", "有多少个", "干嘛用", "能干嘛", "用来干什么", "作用是", "含义", "历史", "对比一下",
        # en
        "why", "what is a", "what is an", "what's a", "what's an", "what is the difference",
        "what is the meaning", "what's the difference", "what does", "what do you mean", "explain", "tell me about",
        "difference between", "is it true", "define", "definition of", "shortcut for", "keyboard shortcut", "hotkey",
        "what happens", "who is", "who was", "meaning of", "how come", "what's the point of", "history of",
        "describe how", "in general",
    ],
    ADVICE: [
        "好用吗", "好不好用", "值得", "值不值", "哪个好", "哪个更", "哪种更", "哪款", "推荐", "建议",
        "该不该", "要不要", "应不应该", "应该用", "应该学", "学哪个", "优缺点", "利弊", "有必要吗", "靠谱吗", "安全吗",
        "合适吗", "更适合", "好吗", "行不行", "有害吗", "伤电池", "哪个更好", "还是用", "还是选", "选哪个",
        "should i", "should we", "would you recommend", "recommend", "which is better", "which one is better",
        "better than", "best way", "what's the best", "what is the best", "best for", "any tips", "tips for",
        "some tips", "give me tips", "advice",
        "pros and cons", "is it bad", "is it safe", "is it ok", "is it okay", "is it worth", "worth it",
        "good idea", "versus", "compared to", "do you think", "thoughts on", "what do you think",
        "opinion on", "better to", "or should", "is it better", "good for", "bad for", "any good", "actually good",
        "actually worth", "tips to", "a few tips", "three tips", "give me * tips", "有用吗", "有没有用", "有必要",
    ],
    EVALUATE: ["够用吗", "够不够", "够吗", "够用", "enough for", "big enough", "fast enough", "enough space"],
    REQUEST_VERB: [
        "google", "bing", "look up", "search for", "search the web", "search online", "find out", "check whether",
        "check if", "look into", "百度一下", "谷歌一下", "搜一搜", "查一查", "上网查", "网上查", "网上搜", "上网搜", "搜一下",
        "查一下", "查查", "帮我查", "帮我看看", "帮我搜", "看看", "看一下", "看下", "查下", "瞧瞧", "check", "see if",
    ],
    REQUEST: [
        "帮我", "帮忙", "麻烦", "请", "替我", "能帮", "可以帮", "你能", "你可以", "我要你", "我想让你", "我需要你",
        "can you", "could you", "would you", "will you", "can u", "please", "i need you to", "i want you to",
        "i'd like you to", "help me", "let's", "go ahead", "i need to know", "for me",
    ],
    CURRENT: [
        "today", "tonight", "tomorrow", "this year", "this week", "this weekend", "this season", "right now",
        "currently", "at the moment", "latest", "now", "rn", "今天", "今晚", "明天", "后天", "今年", "本周", "这周",
        "现在", "目前", "最新", "实时", "明后天", "最近", "周末", "这周末", "下周",
    ],
    NEUTRAL: [
        "怎么样", "咋样", "怎么了", "怎么还", "怎么这么", "怎么老是", "怎么一直", "怎么又", "咋这么", "so slow", "so laggy",
        "keeps crashing", "keeps freezing", "won't", "not working", "doesn't work", "stopped working", "broken",
        "so hot", "so loud", "so full",
    ],
    COMPOSE: [
        "写一封", "写一篇", "写一首", "写一段", "写一个", "写个", "写首", "写篇", "写段", "编一个", "编个", "起草", "草拟",
        "翻译", "润色", "改写", "总结一下", "概括", "想一句", "想个", "想几个", "帮我想", "拟一", "改得", "写一份", "写份",
        "write a", "write an", "write me", "draft a", "draft an", "draft me", "compose", "translate", "proofread",
        "rewrite", "rephrase", "summarize", "summarise", "come up with", "make it more", "make it less",
        "make it shorter", "make it longer", "make it sound", "tell me a", "give me a name", "brainstorm",
        "polish", "give me a", "give me an", "add comments", "add type hints", "type hints", "refactor",
        "fix the bug", "optimize it", "simplify it", "加上注释", "加注释", "优化一下", "重构", "改一下代码",
    ],
    NEGATION: [
        "别", "不要", "不用", "先别", "先不要", "先不", "暂时不", "暂时别", "还不要", "不必", "无需", "千万别", "用不着",
        "don't", "do not", "never", "no need to", "not now", "i don't need", "i do not need", "no need for",
        "我不需要", "不需要",
    ],
    DEFERRAL: [
        "not yet", "hold off", "wait until", "wait till", "let me check first", "let me look first", "i'll * myself",
        "i will * myself", "by myself", "我自己", "do it later", "maybe later", "晚点再说", "以后再说", "回头再说", "改天",
        "let me read it first", "i'll do it myself", "i will do it myself", "before you", "for now",
        "等*再", "晚点再", "回头再", "先等等", "我自己来", "我自己抄", "我自己发", "我想先看", "我先看", "先看懂",
    ],
    POSSESSIVE: [
        "我的", "我电脑", "我这", "我刚", "我下载", "我桌面", "我存", "我设", "我有", "咱", "my", "mine", "our", "i just",
        "you just", "i have", "i've", "do i have", "i set", "i saved",
    ],
    PAST: [
        "你之前", "你刚才", "你上次", "上次你", "上回你", "你上回", "你上个月", "你上周", "你昨天", "你前几天", "你推荐", "我们讨论", "之前我们", "我们说过", "上次*聊", "之前*聊", "咱们*聊", "我们*聊", "did i say", "what did i say", "我们上次", "我们之前", "咱们上次", "上次聊", "之前聊", "以前聊", "我们聊过", "聊过的",
        "跟你说过", "告诉过你", "我问过你", "you told me", "you said", "you mentioned", "we talked", "we discussed",
        "we chatted", "last time we", "did i tell you", "i told you", "i asked you", "you gave me", "you suggested",
        "did we", "have we", "we ever", "you give me", "did you give me", "did you tell me", "you recommended",
    ],
    DEMONSTRATIVE: [
        "这", "那", "这台", "本机", "这个", "那个", "这些", "那些", "这份", "那份", "这段", "那段", "这张", "那张", "这串",
        "this", "these", "that", "those",
    ],
    OBJECT: [
        "屏幕", "显示器", "窗口", "剪贴板", "剪切板", "粘贴板", "电脑", "笔记本", "本机", "机子", "机器", "文件", "文件夹", "目录",
        "桌面", "下载", "文档", "照片", "图片", "截图", "硬盘", "磁盘", "c盘", "d盘", "u盘", "电池", "内存", "进程", "提醒", "风扇", "端口", "显卡",
        "待办", "清单", "邮箱", "收件箱", "聊天记录", "对话", "网页", "链接", "压缩包", "安装包",
        "screen", "monitor", "display", "window", "clipboard", "computer", "laptop", "machine",
        "file", "folder", "directory", "desktop", "downloads", "documents",
        "photos", "pictures", "screenshot", "disk", "drive", "battery", "ram", "processes", "reminders",
        "reminder", "to-do", "todo", "list", "inbox", "mailbox", "chats", "conversation", "page", "link",
        "installer", "archive", "pdf", "docx", "zip", "spreadsheet", "‹path›", "‹url›", "‹email›",
        "‹archive›", "‹data›", "‹pyscript›", "‹shscript›", "‹ref›", "fan", "cpu", "memory", "port", "gpu",
    ],
    MACHINE: [
        "屏幕", "显示器", "剪贴板", "剪切板", "硬盘", "磁盘", "c盘", "d盘", "u盘", "电池", "内存", "风扇", "端口", "显卡", "电脑", "本机",
        "screen", "monitor", "clipboard", "disk", "drive", "battery", "ram", "memory", "cpu", "fan", "port", "gpu",
        "computer", "laptop", "‹path›",
    ],
    CONTAINER: [
        "屏幕", "显示器", "窗口", "剪贴板", "剪切板", "粘贴板", "电脑", "文件", "文件夹", "目录", "桌面", "下载", "文档", "硬盘", "磁盘",
        "c盘", "d盘", "u盘", "待办", "清单", "邮箱", "收件箱", "screen", "monitor", "display", "window", "clipboard",
        "computer", "laptop", "folder", "directory", "desktop", "downloads", "documents", "disk", "drive", "list",
        "inbox", "‹path›", "‹archive›",
    ],
    LOCATIVE: ["里", "上", "里面", "里头", "in the", "on the", "inside the", "in my", "on my", "from my"],
    ABOUT: ["about", "关于", "regarding", "on the topic of", "介绍", "讲述", "描写", "描述"],
    EDIT: [
        "add", "remove", "change", "replace", "make it", "shorten", "lengthen", "rename", "reword", "let it", "加",
        "加上", "加一", "删掉", "去掉", "删了", "改", "改成", "换成", "让它",
    ],
    ELSEWHERE: ["phone", "iphone", "android", "car", "tv", "watch", "tablet", "手机", "车", "电视", "手表", "平板"],
    ATTRIBUTE: ["型号", "版本", "系统", "配置", "处理器", "芯片", "牌子", "品牌", "分辨率", "容量"],
    CONTINUE: [
        "again", "the same", "same for", "same thing", "as well", "one more", "another one", "redo",
        "再来", "再发", "再试", "再跑", "一样", "同样", "重新",
    ],
}
# fmt: on

#: Cues that say the model answers or nothing is wanted: inside an action phrase they belong to the phrase.
BLOCKING = frozenset({NEGATION, DEFERRAL, KNOWLEDGE, HOWTO, ADVICE, EVALUATE, COMPOSE})

#: Each kind its own layer: cues never hide intent keywords (layer 0) nor each other across kinds.
LAYERS: dict[str, int] = {kind: i + 1 for i, kind in enumerate(CUES)}
CUE_LAYERS = frozenset(LAYERS.values())


def add_cues(matcher: KeywordMatcher) -> None:
    """Put the cue phrases into ``matcher`` (one pass over the text finds keywords and cues)."""
    for kind, phrases in CUES.items():
        for phrase in phrases:
            matcher.add(kind, phrase, 1.0, LAYERS[kind])


# Words a clause may be made of and still be only thanks, a greeting or an acknowledgement ("thanks, that
# worked", "好的谢谢", "perfect"): such a turn needs nothing, not even the previous turn's tools.
# Subjects before a writing verb make it a statement ("we brainstormed it once"), not a request.
SUBJECTS = frozenset(["i", "we", "you", "they", "he", "she", "我们", "他们", "她们"])
SOCIAL_EN = frozenset(
    [
        "thanks",
        "thank",
        "thx",
        "ty",
        "tysm",
        "cheers",
        "perfect",
        "great",
        "awesome",
        "cool",
        "nice",
        "ok",
        "okay",
        "k",
        "got",
        "it",
        "good",
        "fine",
        "that's",
        "that",
        "s",
        "all",
        "no",
        "yes",
        "yep",
        "yeah",
        "sure",
        "bye",
        "goodbye",
        "night",
        "much",
        "so",
        "very",
        "lot",
        "a",
        "worked",
        "works",
        "working",
        "appreciate",
        "appreciated",
        "done",
        "lovely",
        "excellent",
        "wonderful",
        "amazing",
        "sweet",
        "alright",
        "right",
        "hi",
        "hello",
        "hey",
        "morning",
        "brilliant",
        "super",
        "you",
        "for",
        "your",
        "help",
        "the",
        "is",
        "was",
        "it's",
        "thats",
        "looks",
        "work",
        "job",
        "well",
        "wow",
        "haha",
        "lol",
        "oh",
        "ah",
        "great!",
        "noted",
        "understood",
        "gotcha",
        "kk",
        "np",
        "problem",
        "nothing",
        "else",
    ]
)
SOCIAL_ZH = frozenset(
    "谢多感好的行可以完美太棒了没问题收到明白知道就这样事不用辛苦再见拜滴嗯哦啦呀啊嘿你您哈对是赞牛吧嘞呢麻烦啦喔噢别"
)
# Units that may open a clause before a negation and keep it clause-initial ("please don't", "你先别").
NEGATION_LEAD = frozenset(
    [
        "please",
        "but",
        "and",
        "ok",
        "okay",
        "no",
        "oh",
        "so",
        "just",
        "actually",
        "wait",
        "hmm",
        "um",
        "well",
        "also",
        "now",
        "then",
        "先",
        "你",
        "请",
        "但",
        "可",
        "是",
        "暂",
        "时",
        "还",
        "也",
        "就",
        "那",
        "好",
        "嗯",
        "哦",
    ]
)
# Chinese verbs that, at the end of a follow-up clause, leave their object unsaid ("跑一下", "发我吧"): the
# object is the previous turn's result.
BARE_VERBS_ZH = ("跑", "运行", "执行", "试", "发", "传", "打开", "存", "保存", "删", "复制", "装", "用")
# Words that stand for something said before ("run it", "把那个发给我").
ANAPHORA = frozenset(
    [
        "it",
        "that",
        "this",
        "them",
        "these",
        "those",
        "its",
        "它",
        "它们",
        "这个",
        "那个",
        "这些",
        "那些",
        "这段",
        "那段",
        "这份",
        "那份",
    ]
)
# A confirmation answers an offer the assistant made ("Want me to zip it?" -> "yes please"); a refusal does not.
CONFIRM = frozenset(
    [
        "yes",
        "yeah",
        "yep",
        "yup",
        "sure",
        "ok",
        "okay",
        "please",
        "go",
        "ahead",
        "do",
        "it",
        "that",
        "go",
        "for",
        "it",
        "sounds",
        "good",
        "好",
        "好的",
        "可以",
        "行",
        "是",
        "的",
        "对",
        "要",
        "需要",
        "嗯",
        "麻烦",
        "了",
        "请",
        "吧",
        "去",
        "做",
        "弄",
        "啊",
        "呀",
    ]
)
REFUSE = frozenset(["no", "nope", "nah", "not", "don't", "dont", "不", "不用", "不要", "算了", "别"])
# The end of an answer that offers to do something: the request it offers ("Shall I zip ~/logs for you?").
OFFERS = (
    "want me to",
    "shall i",
    "should i",
    "do you want me to",
    "would you like me to",
    "i can",
    "i could",
    "let me know if you want me to",
    "要不要我",
    "需要我",
    "我可以帮你",
    "要我",
    "是否需要我",
    "我来帮你",
)
# English auxiliaries that open a yes/no question ("is my phone connected", "does it rain"); stemmed.
YES_NO_EN = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "do",
        "doe",
        "did",
        "can",
        "could",
        "will",
        "would",
        "should",
        "has",
        "have",
        "hav",
        "am",
        "may",
        "might",
        "shall",
        "isn",
        "aren",
        "doesn",
    ]
)
YES_NO_ZH_END = ("吗", "嘛", "么", "呢")
