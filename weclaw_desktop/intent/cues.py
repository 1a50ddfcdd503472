"""Language cues that hold for every intent: is the request a knowledge question, or about the user's own
things? They are properties of how people talk, not of any tool, so they live here and not in tools.json.

A knowledge or how-to question ("Mac 上怎么查看隐藏文件？", "why is the sky blue") is answered by the
model itself, so its scores are damped: a strong keyword still routes (to the medium tier), a generic word
or a loose similarity no longer does. A request about the user's own things ("my laptop", "我的文件", a path or
address) or phrased as a request ("帮我", "查一下", "can you") is not damped: "why is my laptop so slow"
needs the tools.
"""

from __future__ import annotations

from weclaw_desktop.intent.matcher import KeywordMatcher
from weclaw_desktop.intent.text import Prepared

QUESTION = "question"
PERSONAL = "personal"
COMPOSE = "compose"
NEUTRAL = "neutral"  # holds a question word but asks about the user's world or complains ("天气怎么样", "怎么这么慢")

# fmt: off
QUESTION_CUES = {
    "zh": [
        "怎么", "怎样", "如何", "为什么", "为啥", "是什么", "什么是", "什么意思", "啥意思", "啥是", "区别", "原理", "哪个好", "好不好", "解释一下",
        "介绍一下", "讲讲", "讲一讲", "科普", "是不是真的", "有什么用", "什么叫", "咋回事", "怎么回事", "该不该", "要不要", "建议", "推荐",
    ],
    "en": [
        "how do", "how does", "how can", "how to", "how would", "how should", "why", "what is a",
        "what is an", "what's a", "what's an", "what is the difference", "what is the meaning",
        "what's the difference", "what does", "explain", "tell me about", "difference between", "is it true",
        "should i", "any tips", "tips for", "what happens", "who is", "who was", "meaning of", "recommend",
    ],
}
# about the user's own things, or phrased as a request ("一下" makes a verb a request: 查一下, 看一下;
# a demonstrative points at something concrete: "剪贴板里那串数字是什么")
PERSONAL_CUES = {
    "zh": [
        "帮我", "给我", "替我", "我的", "我电脑", "我手机", "我这", "这台", "本机", "这个文件", "我刚", "咱", "一下", "看看", "查查", "帮忙",
        "麻烦", "这个", "那个", "这段", "那段", "这份", "那份", "这串", "那串", "我之前", "你之前", "我问过", "问过你", "这电脑", "这个电脑",
    ],
    "en": [
        "my", "mine", "for me", "this computer", "this machine", "this pc", "this mac", "this laptop",
        "i just", "you told me", "did you tell me", "you said", "we talked", "we discussed", "can you",
        "could you", "please",
    ],
}
NEUTRAL_CUES = ["怎么样", "怎么了", "怎么还", "怎么这么", "怎么老是", "怎么一直", "怎么又"]
# asking the model to write or rework text: its own job, unless a tool phrase says to save or send it
COMPOSE_CUES = {
    "zh": [
        "写一封", "写一篇", "写一首", "写一段", "写一个", "写个", "写首", "写篇", "写段", "编一个", "编个", "起草", "草拟",
        "翻译", "润色", "改写", "总结一下", "概括", "想一句", "想个", "帮我想",
    ],
    "en": [
        "write a", "write an", "write me a", "draft a", "draft an", "compose", "translate", "proofread", "rewrite",
        "rephrase", "summarize this", "summarise this", "come up with",
    ],
}
# fmt: on


CUE_LAYER = 1  # cue matches never suppress intent keywords, nor the other way round


def add_cues(matcher: KeywordMatcher) -> None:
    """Put the cue phrases into ``matcher`` (one pass over the text finds keywords and cues)."""
    for lang in ("zh", "en"):
        for phrase in QUESTION_CUES[lang]:
            matcher.add(QUESTION, phrase, 1.0, CUE_LAYER)
        for phrase in PERSONAL_CUES[lang]:
            matcher.add(PERSONAL, phrase, 1.0, CUE_LAYER)
    for phrase in NEUTRAL_CUES:
        matcher.add(NEUTRAL, phrase, 1.0, CUE_LAYER)
    for lang in ("zh", "en"):
        for phrase in COMPOSE_CUES[lang]:
            matcher.add(COMPOSE, phrase, 1.0, CUE_LAYER)


def is_composition(cues: set[str], prepared: Prepared) -> bool:
    """A request to write or rework text, with no file, page or address to act on."""
    return COMPOSE in cues and not (prepared.has_path or prepared.has_url or prepared.has_email)


def is_knowledge_question(cues: set[str], prepared: Prepared) -> bool:
    """A question the model answers itself: a question cue, and nothing about the user's own things."""
    if QUESTION not in cues:
        return False
    return not (PERSONAL in cues or prepared.has_path or prepared.has_url or prepared.has_email)
