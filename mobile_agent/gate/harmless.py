"""Controls known to be harmless wherever they are: they go somewhere, show something, or undo nothing (back,
close, cancel, details, help and terms, carting, liking, following, copying, marking read). The whole label must be
one of these, folded; a trailing chevron or count and a quoted object ("Copy “482913”") are set aside. Precaution
lets these through on screens that could cost something; everything else there asks."""

from __future__ import annotations

import re

from mobile_agent.gate.lexicon import is_no, verb_kind
from mobile_agent.gate.lexicon_languages import HARMLESS_WORDS
from mobile_agent.screen.text import fold, spaced

_HARMLESS_ZH = re.compile(
    r"(返回|关闭|取消|退出|查看|查看详情|详情|订单详情|账单详情|商品详情|更多|查看更多|展开|展开全部|收起|全部|帮助|客服|在线客服|联系客服|"
    r"联系商家|联系卖家|咨询|说明|规则|活动规则|使用规则|了解更多|了解详情|常见问题|用户协议|隐私政策|服务协议|隐私协议|"
    r"加入购物车|加购|加入购物袋|收藏|已收藏|关注|已关注|点赞|喜欢|复制|编辑|修改|更换|切换|换一换|换一批|刷新|搜索|筛选|排序|"
    r"进店|进入店铺|店铺|规格|选择规格|评价|全部评价|问大家|选择|选择地址|添加地址|新增地址|修改地址|选择优惠券|不使用优惠券|"
    r"备注|添加备注|上一步|上一页|下一页|我知道了|知道了|稍后|稍后再说|以后再说|暂不|不了|跳过|拒绝|不允许|禁止|标记已读|"
    r"设为已读|已读|静音|免打扰|稍后提醒|收款|确认收款|收下|接收|回复|发消息|发短信|分享|更多选项|附件|添加附件|添加|新增|存草稿|保存草稿|草稿|切换账号|(使用)?其他(手机号|号码|账号|方式)(登录|注册)?|换个(号码|账号)(登录)?|首页|我的|消息|分类|购物车|发现|通讯录|联系人|打开|去看看|看看|预览|放大|播放|暂停)"
)
_HARMLESS_EN = re.compile(
    r"(back|go back|close|cancel|exit|view|view details|view order|view all|details|more|more info|see all|see more|"
    r"see details|show more|show all|learn more|read more|expand|collapse|help|support|contact( us| seller| support)?|"
    r"faq|terms|terms (of service|of use|and conditions)|privacy|privacy policy|edit|change|change payment method|"
    r"change method|select|choose|switch|refresh|search|filter|sort|add to (cart|bag|basket|wishlist|favou?rites)|"
    r"save for later|wishlist|favorite|favourite|like|follow|following|copy|previous|prev|not now|maybe later|later|"
    r"skip|dismiss|deny|don t allow|no thanks|mark as read|mark read|archive|snooze|mute|home|open|preview|play|pause|"
    r"reply|message|text|share|accept payment|receive|attach|attach file|add|add new|more options|overflow|save draft|"
    r"(use )?(another|a different|other) (number|account|phone number|method|way)|switch account)"
)
_HARMLESS_OTHER = frozenset(fold(w.replace("_", " ")) for w in HARMLESS_WORDS.split())
_TRAILER = re.compile(r"[\s>›〉»→\-–—]+$|\s*[(（\[【]?\s*\d{1,3}\+?\s*[)）\]】]?$")
# What a control acts on, quoted after its verb: Copy "482913", 复制「链接」.
_QUOTED = re.compile(r"[\"“”'‘’「」『』«»].*?([\"“”'‘’「」『』«»]|$)")
# A verb of looking, copying, opening or editing with its object ("复制链接", "通话详情", "View order details",
# "Open link"): it shows or prepares something, it commits nothing.
_LOOK_ZH = re.compile(
    r"(查看|复制|打开|编辑|修改|更换|切换|管理|设置|分享|收藏|展开|标记|设为).{1,6}|.{1,8}(详情|明细|说明|规则|协议|政策)"
)
_LOOK_EN = re.compile(
    r"(view|see|show|copy|open|edit|change|manage|share|expand|read) .{1,30}|.{1,30} (details|info|settings|options)"
)
# A no dressed up to shame the person out of it ("残忍拒绝", "狠心放弃福利", "No, I don't want to save"): a refusal
# with a word or two around it is still a refusal, as long as no consequential verb rides along.
_SHAMED_NO_ZH = re.compile(
    r".{0,4}(拒绝|放弃|不要|不需要|不想要|算了|不了|不用了|离开|残忍离开|不感兴趣|不划算)(优惠|福利|特权|权益|好礼|了|吧)?"
)
_SHAMED_NO_EN = re.compile(
    r"(no|nope|not now|maybe later|no thanks?|i ?ll pass|i don ?t (want|need|like|care)|i prefer not|"
    r"i m not interested|i d rather (not|pay full price))\b.{0,40}"
)
CHEVRON = re.compile(r"[>›〉»▾▼⌄∨]\s*$")


def harmless_words(label: str | list[str] | tuple[str, ...]) -> str | None:
    """Why the words of a label are known to be harmless (a no, or a phrase that only goes somewhere or shows
    something), or None. A control named several ways (its text and its description) is harmless when every name
    is."""
    names = [label] if isinstance(label, str) else list(label)
    names = list({fold(n): n.strip() for n in names if fold(n)}.values())
    if not names:
        return None
    reasons = [_harmless_name(n) for n in names]
    if len(names) > 1 and all(r is None for r in reasons):
        reasons = [_harmless_name(" ".join(names))]
    return reasons[0] if all(r is not None for r in reasons) else None


def _harmless_name(label: str) -> str | None:
    if is_no(label):
        return "a no"
    if (_SHAMED_NO_ZH.fullmatch(fold(label)) or _SHAMED_NO_EN.fullmatch(spaced(label).strip())) and verb_kind(
        label, anywhere=True
    ) is None:
        return "a no, however it is worded"
    words = _TRAILER.sub("", _QUOTED.sub("", label)).strip()
    folded = fold(words)
    if words and (
        _HARMLESS_ZH.fullmatch(folded)
        or _HARMLESS_EN.fullmatch(spaced(words).strip())
        or folded in _HARMLESS_OTHER
        or _LOOK_ZH.fullmatch(folded)
        or _LOOK_EN.fullmatch(spaced(words).strip())
    ):
        return f"'{words[:30]}' only goes somewhere or shows something"
    return None


__all__ = ["CHEVRON", "harmless_words"]
