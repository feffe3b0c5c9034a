"""Precaution: on a screen that could cost something, a primary control asks unless it is known to be harmless.

The word rules (:mod:`mobile_agent.gate.consequence`) recognise controls by what they say. A word nobody listed, in a
language nobody listed, beats them. Precaution inverts the question for the controls that commit a screen:

- the primary controls: the buttons of a sheet or dialog, the page's main button (wide, or on the bottom bar), and
  controls the tree cannot name that sit where those are;
- the potential of their scope (:mod:`mobile_agent.gate.potential`): the sheet's own words for a sheet's button,
  the page's for the page's button;
- known harmless: navigation, view, cancel, close, back, help and terms, a tab, a field, a stepper, a row that opens
  a page, carting and favouriting. Everything else on a screen with potential asks, in any script.
"""

from __future__ import annotations

import re

from mobile_agent.gate.blind import stepper
from mobile_agent.gate.finding import Finding
from mobile_agent.gate.lexicon import is_no
from mobile_agent.gate.lexicon_languages import HARMLESS_WORDS
from mobile_agent.gate.pages import list_row, lowest
from mobile_agent.gate.potential import Potential, potential_of
from mobile_agent.screen.context import ScreenReader, TargetContext
from mobile_agent.screen.labels import labels_of
from mobile_agent.screen.text import fold, spaced
from mobile_agent.screen.viewtree import visible

_SHEET_MAX = 0.6  # of the screen's area: a card or sheet is smaller; a layer as big as a page is the page
_BUTTON_LABEL_MAX = (
    16  # folded characters: "立即支付 ¥99.00", "Place your order"; a row or a sentence is longer
)

# Controls known to be harmless wherever they are: they go somewhere, show something, or undo nothing. The whole
# label must be one of these (folded; a trailing chevron or count is ignored).
_HARMLESS_ZH = re.compile(
    r"(返回|关闭|取消|退出|查看|查看详情|详情|订单详情|账单详情|商品详情|更多|查看更多|展开|展开全部|收起|全部|帮助|客服|在线客服|联系客服|"
    r"联系商家|联系卖家|咨询|说明|规则|活动规则|使用规则|了解更多|了解详情|常见问题|用户协议|隐私政策|服务协议|隐私协议|"
    r"加入购物车|加购|加入购物袋|收藏|已收藏|关注|已关注|点赞|喜欢|复制|编辑|修改|更换|切换|换一换|换一批|刷新|搜索|筛选|排序|"
    r"进店|进入店铺|店铺|规格|选择规格|评价|全部评价|问大家|选择|选择地址|添加地址|新增地址|修改地址|选择优惠券|不使用优惠券|"
    r"备注|添加备注|上一步|上一页|下一页|我知道了|知道了|稍后|稍后再说|以后再说|暂不|不了|跳过|拒绝|不允许|禁止|标记已读|"
    r"设为已读|已读|静音|免打扰|稍后提醒|回复|发消息|发短信|首页|我的|消息|分类|购物车|发现|通讯录|联系人|打开|去看看|看看|预览|放大|播放|暂停)"
)
_HARMLESS_EN = re.compile(
    r"(back|go back|close|cancel|exit|view|view details|view order|view all|details|more|more info|see all|see more|"
    r"see details|show more|show all|learn more|read more|expand|collapse|help|support|contact( us| seller| support)?|"
    r"faq|terms|terms (of service|of use|and conditions)|privacy|privacy policy|edit|change|change payment method|"
    r"change method|select|choose|switch|refresh|search|filter|sort|add to (cart|bag|basket|wishlist|favorites)|"
    r"save for later|wishlist|favorite|favourite|like|follow|following|copy|previous|prev|not now|maybe later|later|"
    r"skip|dismiss|deny|don t allow|no thanks|mark as read|mark read|archive|snooze|mute|home|open|preview|play|pause|"
    r"reply|message|text)"
)
_HARMLESS_OTHER = frozenset(fold(w.replace("_", " ")) for w in HARMLESS_WORDS.split())
_TRAILER = re.compile(r"[\s>›〉»→\-–—]+$|\s*[(（\[【]?\s*\d{1,3}\+?\s*[)）\]】]?$")
# What a control acts on, quoted after its verb: Copy "482913", 复制「链接」.
_QUOTED = re.compile(r"[\"“”'‘’「」『』«»].*?([\"“”'‘’「」『』«»]|$)")
_CHEVRON = re.compile(r"[>›〉»▾▼⌄∨]\s*$")


def known_harmless(reader: ScreenReader, ctx: TargetContext, labels: list[str]) -> str | None:
    """Why the control is known to be harmless (None: it is not known to be)."""
    target = ctx.target
    if target is None:
        return "nothing takes the touch"
    if ctx.is_tab:
        return "a tab"
    if reader.is_edit(target) or ctx.is_edit:
        return "a text field"
    if target.node.get("checkable") == "true":
        return "a check box or switch (named by its row)"
    label = " ".join(labels).strip()
    said = harmless_words(label)
    if said is not None:
        return said
    if label and _CHEVRON.search(label):
        return "a row that opens a page"
    if list_row(ctx):
        return "a row of a list"
    if re.fullmatch(r"[+\-−－＋]|\d{1,3}", label) or stepper(reader, target):
        return "a stepper"
    return None


def harmless_words(label: str) -> str | None:
    """Why the words of a label are known to be harmless (a no, or a phrase that only goes somewhere or shows
    something), or None."""
    label = label.strip()
    if not label:
        return None
    if is_no(label):
        return "a no"
    words = _TRAILER.sub("", _QUOTED.sub("", label)).strip()
    folded = fold(words)
    if words and (
        _HARMLESS_ZH.fullmatch(folded)
        or _HARMLESS_EN.fullmatch(spaced(words).strip())
        or folded in _HARMLESS_OTHER
    ):
        return f"'{words[:30]}' only goes somewhere or shows something"
    return None


def primary_role(reader: ScreenReader, ctx: TargetContext) -> str | None:
    """Which primary control of its screen the target is: "sheet button", "main button", or None (a control the
    page holds among many: the word rules judge it)."""
    target = ctx.target
    if target is None or not ctx.takes_touch:
        return None
    container = ctx.container
    if container is not None and container.bounds is not None and container.node is not target.node:
        c = container.bounds
        if (c.right - c.left) * (c.bottom - c.top) < _SHEET_MAX * reader.screen.width * reader.screen.height:
            return "sheet button"
    if not _button_like(ctx) or _tab_bar_item(reader, target):
        return None
    b, screen = target.bounds, reader.screen
    if b is None:
        return None
    width = b.right - b.left
    on_bottom_bar = b.top >= 0.85 * screen.height and width >= 0.25 * screen.width
    # A wide button below the page's content (a form's or a review's commit), not a row near the top.
    wide_and_last = width >= 0.6 * screen.width and b.top >= 0.35 * screen.height and lowest(reader, ctx)
    return "main button" if on_bottom_bar or wide_and_last else None


def scope_potential(reader: ScreenReader, ctx: TargetContext, role: str) -> Potential | None:
    """The potential of what the primary control commits: its sheet, or its page. What is typed into a field (a
    price filter's ¥50) is the user's input, not what the screen asks for."""
    sheet = role == "sheet button" and ctx.container is not None
    scope = (
        ctx.container.node.iter("node")
        if sheet and ctx.container is not None
        else reader.tree.root.iter("node")
    )
    texts = [
        t
        for n in scope
        if (e := reader.element(n)) is not None and visible(e) and not reader.is_edit(e)
        for t in labels_of(e)
    ]
    if sheet:
        return potential_of(texts, None, in_sheet=True)
    return potential_of([*reader.page_title(), *texts], reader)


def precaution(reader: ScreenReader, ctx: TargetContext, labels: list[str]) -> Finding | None:
    """A primary control, not known to be harmless, on a scope with potential: ask, with the potential's kind."""
    role = primary_role(reader, ctx)
    if role is None or known_harmless(reader, ctx, labels) is not None:
        return None
    potential = scope_potential(reader, ctx, role)
    if potential is None:
        return None
    label = " ".join(labels)[:30] or "an unnamed control"
    where = "sheet" if role == "sheet button" else "page"
    return Finding(
        potential.kind,
        "precaution",
        ctx.describe(),
        f"'{label}' is the {role} of a {where} with {potential.describe()}, and not known to be harmless",
        (*potential.signals, f"{role} not known to be harmless"),
    )


def _tab_bar_item(reader: ScreenReader, target) -> bool:  # noqa: ANN001 - an Element
    """One of three or more look-alike clickable peers in one row at the bottom (首页 | 分类 | 购物车 | 我的). A
    bottom bar's main button is wider than the icons beside it (客服 | 店铺 | [ 立即购买 ])."""
    b = target.bounds
    if b is None or b.top < 0.8 * reader.screen.height:
        return False
    width = b.right - b.left
    node = target.node
    for _ in range(3):
        parent = node.getparent()
        if parent is None or parent.tag != "node":
            return False
        boxes = [
            e.bounds
            for n in parent.iterchildren("node")
            if (n.get("clickable") == "true" or any(c.get("clickable") == "true" for c in n.iter("node")))
            and (e := reader.element(n)) is not None
            and e.bounds is not None
        ]
        alike = [
            x for x in boxes if abs((x.right - x.left) - width) <= 0.25 * width and abs(x.top - b.top) <= 40
        ]
        if len(boxes) >= 3:
            return len(alike) >= 3
        node = parent
    return False


def _button_like(ctx: TargetContext) -> bool:
    """A button, not a row: one short label (or none), no chevron, not a row of a scrolling list."""
    words = fold(" ".join(dict.fromkeys(ctx.labels)))
    if len(words) > _BUTTON_LABEL_MAX or len(set(ctx.labels)) > 2 or _CHEVRON.search(" ".join(ctx.labels)):
        return False
    return not list_row(ctx)


__all__ = ["harmless_words", "known_harmless", "precaution", "primary_role", "scope_potential"]
