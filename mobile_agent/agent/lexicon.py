"""The words of consequence, in Chinese and English: verbs that name a consequential control, topics that say
what a yes in a dialog would do, yes and no labels, the model's "I am about to pay" phrasing, link schemes.

Chinese is matched on the folded form (no spaces, simplified, lower case), English on the spaced form with word
starts (see :mod:`mobile_agent.screen.text`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from mobile_agent.screen.text import fold, spaced

KINDS = ("pay", "transfer", "order", "delete", "send", "post", "call", "sensitive")
MONEY_KINDS = frozenset({"pay", "transfer", "order"})

# Chinese on the folded form (no spaces, simplified, lower case); English on the spaced form with word starts.
_ZH_VERBS: dict[str, str] = {
    "transfer": r"转账|转帐|汇款|转给|转出|提现",
    "pay": r"支付|付款|付钱|买单|结账|结帐|收银台|确认收货|免密|自动扣款|代扣|立即充值|充值|缴费|打赏|续费",
    "order": r"下单|提交订单|确认订单|立即购买|马上购买|立即抢购|抢购|立即预订|确认预订|立即兑换|买入|卖出|立即申购|申购|加购并结算|拼单|开通(?!权限|通知|定位|蓝牙)",
    "delete": r"删除|清空|清除|清理|移除|卸载|注销|解绑|撤回|粉碎|恢复出厂",
    "send": r"发送|发出|传送|拍一拍|邀请",
    "post": r"发表|发布|发帖|发动态|发朋友圈|发微博|投稿|转发|分享到朋友圈",
    "call": r"呼叫|拨打|拨号|通话|打电话|回拨|视频聊天|语音聊天|接听",
}
# The same kinds in Japanese and Korean (matched like Chinese, on the folded form).
_JA_KO_VERBS: dict[str, str] = {
    "transfer": r"振込|振り込|送金|송금|이체",
    "pay": r"支払|決済|お支払い|결제|지불|충전",
    "order": r"購入|注文|구매|주문",
    "delete": r"削除|消去|삭제|지우기",
    "send": r"送信|보내기|전송",
    "post": r"投稿|게시|올리기",
    "call": r"発信|전화|통화",
}
# Text is folded before matching (OpenCC turns 購入 into 购入), so the words are folded the same way.
_JA_KO_FOLDED = {
    kind: "|".join(dict.fromkeys(fold(word) for word in words.split("|")))
    for kind, words in _JA_KO_VERBS.items()
}
for _kind, _pattern in _JA_KO_FOLDED.items():
    _ZH_VERBS[_kind] += "|" + _pattern
_EN_VERBS: dict[str, str] = {
    "transfer": r"\btransfer|\bsend ?money\b|\bwire\b|\bwithdraw|\bremit",
    "pay": r"\bpay(?!ment methods?\b|pal\b)|\btop ?up\b|\bconfirm payment|\bauto-?pay|\bauto-?debit",
    "order": r"\bbuy\b|\bbuy ?now\b|\bplace ?(your )?order|\bsubmit ?order|\bpurchase|\border now|\bbook now|\bsubscribe\b|\bsell\b",
    "delete": r"\bdelete|\bremove\b|\berase|\bwipe|\bclear (all|chat|history|data)|\bempty trash|\buninstall|\bunsend|\breset\b",
    "send": r"\bsend\b|\bsend it\b|\bnudge\b|\binvite\b",
    "post": r"\bpost\b|\btweet\b|\bpublish|\bshare now\b|\brepost|\bretweet",
    "call": r"\bcall\b|\bdial\b|\bvideo call|\bvoice call|\bfacetime|\banswer\b",
}
# Nouns for places to go: removed before the verbs are looked for ("查看订单" is not an order).
_ZH_PLACES = re.compile(
    r"支付宝|支付方式|支付设置|支付管理|支付安全|付款方式|付款码|收付款|收款码|转账记录|交易记录|账单|订单详情|查看订单|"
    r"我的订单|全部订单|订单列表|待付款|待支付|退款|通话记录|最近通话|发送记录|评论区|查看评论|全部评论|发布会|"
    r"发送验证码|获取验证码|重新发送验证码|重发验证码|清除搜索|清空搜索|搜索历史|清除缓存|清理缓存|缓存|删除线|回复我的|充值记录|结算规则|买入规则|发现|消息免打扰"
)
_EN_PLACES = re.compile(
    r"\b(payment|pay|order|call|transfer|purchase)s? ?(history|details|methods?|settings|records?|list|log|status)\b|"
    r"\bview (orders?|details|comments)\b|\bmy orders?\b|\bcall log\b|\bclear search|\bsearch history|\bclear cache|"
    r"\b(re)?send (the )?(verification )?code\b"
)
# A generic yes: the whole label is one of these (folded).
_YES = re.compile(
    r"(确定|确认|好|好的|是|是的|对|继续|提交|同意|完成|下一步|立即|马上|我确认|确认无误|确认提交|确定提交|同意并继续|"
    r"接受|允许|授权|ok|okay|yes|y|confirm|continue|submit|agree|accept|done|next|proceed|go|allow|sure|"
    r"√|✓|✔)"
)
_NO = re.compile(
    r"(取消|返回|关闭|暂不|以后再说|稍后|我再想想|再想想|不了|不用了|否|不同意|拒绝|放弃|跳过|知道了|我知道了|"
    r"cancel|back|close|notnow|no|nothanks|later|dismiss|skip|gotit|×|x)"
)
# Words in a dialog or on a screen that say what a yes there would do.
_ZH_TOPICS: dict[str, str] = {
    "transfer": r"转账|转帐|汇款|收款人|收款方|对方账户|提现",
    "pay": r"支付|付款|付钱|实付|应付|需付|合计|总计|收银台|支付密码|交易密码|免密|确认收货|充值",
    "order": r"下单|提交订单|确认订单|订单金额|购买|买入|卖出|委托|申购|预订|兑换|开通",
    "delete": r"删除|清空|清除|清理|移除|卸载|注销|解绑|撤回|不可恢复|无法恢复|恢复出厂",
    "send": r"发送|发给|发送给|转发给|分享给",
    "post": r"发表|发布|公开|投稿",
    "call": r"呼叫|拨打|通话|来电|接听",
}
for _kind, _pattern in _JA_KO_FOLDED.items():
    _ZH_TOPICS[_kind] += "|" + _pattern
_EN_TOPICS: dict[str, str] = {
    "transfer": r"\btransfer|\bsend money|\brecipient|\bwithdraw|\bwire\b",
    "pay": r"\bpay|\bpayment|\bcharge|\btotal\b|\bcheckout|\bpin\b",
    "order": r"\border\b|\bpurchase|\bbuy\b|\bsell\b|\bsubscription",
    "delete": r"\bdelete|\bremove|\berase|\bwipe|\bcannot be undone|\bpermanently|\breset\b",
    "send": r"\bsend\b|\bsend to\b|\bforward to",
    "post": r"\bpost\b|\bpublish|\bpublic\b",
    "call": r"\bcall\b|\bdial\b|\bincoming\b",
}
SLIDER = re.compile(r"滑|拖动|拖到|slide|swipe|drag")
HOLD = re.compile(r"长按|按住|holdto|pressandhold|longpress")
CHAT_FIELD = re.compile(
    r"chat|message|msg|comment|reply|input|compose|说点什么|发消息|输入|评论|回复|留言|弹幕|写点|聊天|消息",
    re.I,
)
SEARCH_FIELD = re.compile(r"search|query|搜索|查找|搜一搜|keyword|url|address", re.I)
PASSWORD_HINT = re.compile(r"密码|口令|pin\b|password|passcode|验证码|支付验证|交易密码|cvv|cvc")
LINK = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)
LINK_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("call", re.compile(r"^(tel|voicemail|callto|facetime|sip|skype):", re.I)),
    ("send", re.compile(r"^(sms|smsto|mms|mmsto|mailto|whatsapp|tg):", re.I)),
    ("pay", re.compile(r"^(upi|paypal|weixin://wxpay|wxpay|unionpay|bitcoin|ethereum|alipayqr):", re.I)),
)
# Links that only open an app or a store page, unless their words name a consequence.
OPEN_ONLY = re.compile(
    r"^(https?|market|weixin|alipays?|taobao|tbopen|openapp\.jdmobile|imeituan|snssdk\d*|bilibili|xhsdiscover|zhihu|intent):",
    re.I,
)
# Alipay mini-program ids: 20000123 收钱 / 20000116 转账 / 20000056 付款码 / 09999988 转账到银行卡.
LINK_WORDS = re.compile(
    r"pay|transfer|send|order|buy|checkout|delete|call|dial|tel|sms|cashier|business|20000123|20000116|20000056|09999988",
    re.I,
)
# The model says it is about to do it: a verb of touching, then a consequential verb, close together.
_INTENT = re.compile(
    r"(点击|点|按下|按|轻触|触摸|选择|确认|完成|执行|进行|tap|click|press|hit|select|confirm|complete|submit|finish)"
    r"(?:(?!然后|之后|再|then|after)[^，,。;；\n]){0,14}?(支付|付款|转账|转帐|汇款|下单|购买|删除|清空|发送|发布|发表|拨打|呼叫|打电话|通话|"
    r"pay|transfer|wire|purchase|buy|order|delete|remove|send|post|publish|call|dial)",
    re.I | re.S,
)


def _first(patterns: dict[str, str], text: str) -> str | None:
    for kind, pattern in patterns.items():
        if re.search(pattern, text):
            return kind
    return None


# What may stand before the verb in a control's name: "确认支付", "¥99.00 立即支付", "一键清理", "同意并支付".
_ZH_LEAD = re.compile(
    r"^[¥$€£\d.,元]*(.{0,2}?(确认|确定|立即|马上|去|再|一键|全部|批量|永久|彻底|同意并|同意协议并|完成|继续|"
    r"提交并|重新|视频|语音|免密|开通|我要|点击|快速|安全|极速|立刻|现在|今すぐ|すぐに|确认して)+)?$"
)
_EN_LEAD = re.compile(
    r"^[¥$€£\d., ]*((confirm|and|yes|ok|now|secure|instant|quick|express|one-click|start|make|place|begin|a|an|the)( |& |and )*)*$"
)


def _leads_well(before: str, lead: re.Pattern[str]) -> bool:
    return lead.fullmatch(before.strip()) is not None


def verb_kind(label: str, *, anywhere: bool = False) -> tuple[str, str] | None:
    """(kind, the words that named it) when a control's label is a consequential verb.

    The verb must open the name (after an amount or a word such as 确认, 立即, 一键, Confirm): running text that
    merely mentions paying ("记得转账AA", "Step 1: Pay with the app") names no control. ``anywhere`` drops that
    condition (for a model's message, a slider's track text).
    """
    if re.fullmatch(r"\s*[\[【(（].*[\]】)）]\s*", label):
        return None  # "[转账]", "【红包】": a message's type tag, not a control's name
    zh = _ZH_PLACES.sub("", fold(label))
    en = _EN_PLACES.sub("", spaced(label))
    for kind, pattern in _ZH_VERBS.items():
        m = re.search(pattern, zh)
        if m and (anywhere or _leads_well(zh[: m.start()], _ZH_LEAD)):
            return kind, label.strip()
    # A short label spelled out with separators ("P-a-y", "S.E.N.D") reads as one word once they are dropped.
    folded = fold(label)
    forms = [en, folded] if len(folded) <= 12 and folded != en else [en]
    for form in forms:
        for kind, pattern in _EN_VERBS.items():
            m = re.search(pattern, form)
            if m and (anywhere or _leads_well(form[: m.start()], _EN_LEAD)):
                return kind, label.strip()
    return None


def topic_kind(texts: Sequence[str]) -> tuple[str, str] | None:
    """(kind, the text that named it) when a dialog's or screen's texts say what a yes would do."""
    for text in texts:
        zh, en = fold(text), spaced(text)
        kind = _first(_ZH_TOPICS, _ZH_PLACES.sub("", zh)) or _first(_EN_TOPICS, _EN_PLACES.sub("", en))
        if kind:
            return kind, text.strip()[:80]
    return None


def is_yes(label: str) -> bool:
    f = fold(label)
    return bool(f) and (_YES.fullmatch(f) is not None or (len(f) <= 6 and f.startswith(("确认", "确定"))))


def is_no(label: str) -> bool:
    f = fold(label)
    return bool(f) and _NO.fullmatch(f) is not None


def intent_kind(words: str) -> tuple[str, str] | None:
    """(kind, the words) when the model's thought or message says it is about to do a consequential thing."""
    if not words:
        return None
    m = _INTENT.search(unicodedata_nfkc(words))
    if m is None:
        return None
    kind = verb_kind(m.group(2))
    return (kind[0] if kind else "sensitive", m.group(0).strip()[:80])


def unicodedata_nfkc(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKC", text) if unicodedata.category(ch) != "Cf")


# A bare money word on a tile or row (转账 on a bank's home screen, 支付 on WeChat's 我 tab) opens a form; the same
# word on a screen that shows an amount, or in a dialog, is the last step. Only these kinds have such entry tiles.
ENTRY_WORDS = re.compile(
    r"(转账|转帐|支付|付款|收付款|充值|买入|卖出|transfer|pay|payments?|buy|sell|top ?up)"
)
AVATAR = re.compile(r"avatar|头像|portrait|head_?img|profile_?(image|photo)", re.I)


_ID_SPLIT = re.compile(r"[/_.:\-]+|(?<=[a-z])(?=[A-Z])")
_ID_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(p, re.I))
    for kind, p in (
        ("transfer", r"^(transfer|remit|withdraw)$"),
        ("pay", r"^(pay|payment|paynow|checkout|cashier|purchase)$"),
        ("order", r"^(order|buy|buynow|placeorder|submitorder|booking)$"),
        ("delete", r"^(delete|del|remove|clear|erase|trash|uninstall)$"),
        ("send", r"^(send|sendbtn|reply)$"),
        ("post", r"^(post|publish|tweet|repost)$"),
        ("call", r"^(call|dial|voip|videocall|voicecall)$"),
    )
)


def id_words(rid: str) -> list[str]:
    tail = rid.rsplit("/", 1)[-1]
    return [w for w in _ID_SPLIT.split(tail) if w]


def id_kind(ids: Sequence[str]) -> tuple[str, str] | None:
    for rid in ids:
        words = id_words(rid)
        if any(
            w.lower()
            in (
                "tab",
                "tabs",
                "history",
                "list",
                "record",
                "records",
                "detail",
                "details",
                "setting",
                "settings",
                "method",
            )
            for w in words
        ):
            continue
        for kind, pattern in _ID_WORDS:
            if any(pattern.search(w) for w in words):
                return kind, rid
    return None


def is_yes_id(ids: Sequence[str]) -> bool:
    return any(
        w.lower() in ("confirm", "ok", "positive", "yes", "submit", "done", "sure")
        for rid in ids
        for w in id_words(rid)
    )


__all__ = [
    "AVATAR",
    "CHAT_FIELD",
    "ENTRY_WORDS",
    "HOLD",
    "KINDS",
    "LINK",
    "LINK_KINDS",
    "LINK_WORDS",
    "MONEY_KINDS",
    "OPEN_ONLY",
    "PASSWORD_HINT",
    "SEARCH_FIELD",
    "SLIDER",
    "id_kind",
    "id_words",
    "intent_kind",
    "is_no",
    "is_yes",
    "is_yes_id",
    "topic_kind",
    "verb_kind",
]
