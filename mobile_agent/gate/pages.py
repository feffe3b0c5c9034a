"""Readings of a whole page that decide what its main button does, whatever the button says: a review page that
states an amount and whom it goes to commits it ("Review / To: Checking ••8841 / $5,000.00 [Xfer]"), a price that
renews ("€10.99/month after") makes the page's button an order, a page that reports a past event (支付成功, "sent
you $250.00") or a carousel of marketing copy (page dots) only moves on."""

from __future__ import annotations

import re

from mobile_agent.gate.lexicon import MONEY_KINDS, is_no, is_settled, topic_kind
from mobile_agent.screen.context import ScreenReader, TargetContext
from mobile_agent.screen.labels import layout_parent
from mobile_agent.screen.text import amounts, fold

# A report that the thing already happened: the page is a receipt, its button only leaves it. Money that moved is
# lexicon.is_settled's; these are the other events, and the places that hold what was already done.
_DONE = re.compile(
    r"(删除|发送|提交|下单|购买|预订|预约|兑换|支付|付款|转账|充值)成功|已(发送|提交|完成|下单|支付|付款|退款|到账)|(已|原路)退回|退款(成功|到账)|订单已提交|最近删除|回收站|"
    r"\border (sent|complete|completed|successful|placed)\b|\b(successfully|succeeded)\b|\brecently deleted\b|"
    r"\badded to your\b",
    re.I,
)


def _reports_past(text: str) -> bool:
    return is_settled(text) or _DONE.search(text) is not None or _DONE.search(fold(text)) is not None


# A page indicator drawn as a row of dots (● ○ ○): a carousel, whose button shows the next slide.
_DOTS = re.compile(r"^[\s●○•◦·∙⚫⚪◉◯]+$")
# A price that comes back: a subscription, so the button that starts it orders it.
_RECURRING = re.compile(
    r"/\s*(month|mo|year|yr|week|wk|月|年|周)\b|/\s*(月|年|周)|\bper (month|year|week)\b|\b(a|each|every) (month|year)\b|"
    r"每(月|年|周|期)|(自动|到期)续费|auto-?renew|renews? (automatically|monthly|yearly|annually)",
    re.I,
)
# Whom a review page's money goes to: "To: …", "收款人 …", or an account number shown masked (••8841, **** 1234).
_PAYEE = re.compile(
    r"^\s*(to|payee|recipient|beneficiary|send to|pay to|收款(人|方|账户|账号)?|转入|转给|付给|收方)\s*[:：]|"
    r"[x*•·]{2,}[-\sx*•·]*\d{3,4}\b|尾号\s?\d{4}",
    re.I,
)


def main_button(reader: ScreenReader, ctx: TargetContext) -> bool:
    """The page's main button: wide, or on its bottom bar, and not in a dialog."""
    target = ctx.target
    if ctx.container is not None or target is None or target.bounds is None:
        return False
    b, screen = target.bounds, reader.screen
    return b.right - b.left >= 0.6 * screen.width or b.top >= 0.85 * screen.height


def _button_like(ctx: TargetContext) -> bool:
    """A button: it takes the touch, says one thing, and is no row of a scrolling list."""
    target = ctx.target
    if target is None or target.node.get("clickable") != "true" or len(set(ctx.labels)) != 1:
        return False
    if re.search(r"[>›〉»]\s*$", ctx.labels[0]):
        return False  # "订单详情 >": a chevron leads to another page
    return not any(
        n.get("scrollable") == "true" or re.search(r"Recycler|ListView", n.get("class") or "")
        for n in target.node.iterancestors("node")
    )


def lowest(reader: ScreenReader, ctx: TargetContext) -> bool:
    """No other wide or bottom-bar control with a label lies below the target: the page's commit is its last (a
    check box below it is its fine print, not another commit)."""
    target = ctx.target
    assert target is not None and target.bounds is not None
    b, screen = target.bounds, reader.screen
    for e in reader.visible:
        o = e.bounds
        if o is None or e.node is target.node or e.node.get("clickable") != "true" or o.top < b.bottom:
            continue
        if e.node.get("checkable") == "true":
            continue  # a consent box under the button ("同意《自动续费规则》"): fine print the button acts under
        if target.node in e.node.iterancestors() or not (e.text.strip() or e.content_desc.strip()):
            if not any((n.get("text") or "").strip() for n in e.node.iter("node")):
                continue
        if (o.right - o.left >= 0.6 * screen.width or o.top >= 0.85 * screen.height) and not _in_tab_bar(e):
            return False
    return True


def _in_tab_bar(e) -> bool:  # noqa: ANN001 - an Element
    """One of three or more clickable peers sharing a row at the bottom (首页 | 分类 | 购物车 | 我的)."""
    parent = e.node.getparent()
    if parent is None or e.bounds is None:
        return False
    same_row = [
        n
        for n in parent.iterchildren("node")
        if n.get("clickable") == "true" and (bx := _box(n)) is not None and bx[1] == e.bounds.top
    ]
    return len(same_row) >= 3


def settled(reader: ScreenReader, ctx: TargetContext) -> str | None:
    """Why the page's button moves on without committing anything: a receipt of a past event, or a carousel.
    ``None`` when the page may still be asking for something."""
    if ctx.container is not None:
        return None
    # The headline says what the page is; a note further down ("上次转账成功") does not make a review page a receipt.
    title = reader.page_title()
    texts = title if title else list(ctx.statements[:2])
    past = next((t for t in texts if _reports_past(t)), None)
    if past is not None:
        return f"the page reports '{past[:40]}'"
    if any(_DOTS.fullmatch(t) and sum(not c.isspace() for c in t) >= 2 for t in ctx.statements):
        return "a carousel (page dots)"
    return None


def past_event(texts: list[str] | tuple[str, ...]) -> bool:
    return any(_reports_past(t) for t in texts)


def review_commit(reader: ScreenReader, ctx: TargetContext) -> tuple[str, str] | None:
    """The kind the page's main button commits, read from the page alone: the amount it states goes to a payee
    (or the title names a payment), or a renewing price makes it an order. ``None``: the page asks for nothing."""
    if not main_button(reader, ctx) or ctx.is_tab or any(is_no(t) for t in ctx.labels):
        return None
    if not _button_like(ctx) or not lowest(reader, ctx):
        return None  # a row of a form (the address, a coupon line, "订单详情 >") opens its own page
    if settled(reader, ctx) is not None:
        return None
    found = [
        a for t in ctx.statements for a in amounts(t)
    ]  # stated by the page, not a balance on the control
    if not found or len({(a.currency, a.value) for a in found}) > 3:
        return None  # nothing to pay, or a list of prices
    renewing = next((t for t in ctx.statements if amounts(t) and _RECURRING.search(t)), None)
    if renewing is None:
        renewing = next(
            (t for t in ctx.statements if _RECURRING.search(t) and re.search(r"续费|renew", t)), None
        )
    if renewing is not None:
        return ("order", renewing)
    title = topic_kind(reader.page_title())
    if title is not None and title[0] in MONEY_KINDS:
        return title
    payee = next((t for t in ctx.statements if _PAYEE.search(t)), None)
    if payee is not None:
        topic = topic_kind(ctx.statements)
        kind = topic[0] if topic is not None and topic[0] in MONEY_KINDS else "pay"
        return (kind, f"{found[0].text} {payee[:30]}")
    return None


def list_row(ctx: TargetContext) -> bool:
    """The target is one of several look-alike rows of a scrolling list (a mail, a chat, a bill)."""
    return len(_rows(ctx)) >= 2


def menu_row(reader: ScreenReader, ctx: TargetContext) -> bool:
    """The target is one entry of a settings menu: three or more look-alike rows stacked in one column, each
    named by a short label, on a page that states no amount ("支付设置: 实名认证 | 支付密码 | 自动续费 | 扣费服务"). A
    money word there names the page the row opens."""
    target = ctx.target
    if target is None or target.bounds is None or ctx.container is not None:
        return False
    parent = target.node.getparent()
    if parent is None:
        return False
    b = target.bounds
    h = b.bottom - b.top
    rows = [
        row
        for row in parent.iterchildren("node")
        if row.get("class") == target.class_name
        and row.get("clickable") == "true"
        and (x := _box(row)) is not None
        and abs((x[3] - x[1]) - h) <= 0.2 * h
        and abs(x[0] - b.left) <= 10
    ]
    if len({_box(r)[1] for r in rows}) < 3:  # type: ignore[index]
        return False
    if any(len(fold(" ".join(_texts(r)))) > 10 for r in rows):
        return False
    return not any(amounts(t) for t in reader.texts())


def side_by_side(ctx: TargetContext) -> bool:
    """The target's look-alikes in a scrolling page all share its row: buttons side by side ([Cancel] [Continue]),
    not the rows of a list."""
    rows = _rows(ctx)
    top = ctx.target.bounds.top if ctx.target is not None and ctx.target.bounds is not None else None
    return 2 <= len(rows) <= 3 and all((b := _box(r)) is not None and b[1] == top for r in rows)


def ledger_row(ctx: TargetContext) -> bool:
    """A row of a statement: it and its look-alike neighbours each end in a signed sum ("-500.00", "+1.23"), the
    record of money that already moved."""
    rows = _rows(ctx)
    signed = [r for r in rows if any(_SIGNED.fullmatch(t.strip()) for t in _texts(r))]
    return ctx.target is not None and ctx.target.node in signed and len(signed) >= 2


_SIGNED = re.compile(r"[+\-−]\s?[¥$€£₽₩]?\s?\d[\d,]*(\.\d+)?")


def _rows(ctx: TargetContext) -> list:
    target = ctx.target
    if target is None or target.bounds is None:
        return []
    parent = layout_parent(target.node)
    if parent is None or (
        parent.get("scrollable") != "true" and not re.search(r"Recycler|ListView", parent.get("class") or "")
    ):
        return []
    h = target.bounds.bottom - target.bounds.top
    return [
        row
        for row in parent.iterchildren("node")
        if row.get("class") == target.class_name
        and (b := _box(row)) is not None
        and abs((b[3] - b[1]) - h) <= 0.2 * h
    ]


def _texts(row) -> list[str]:  # noqa: ANN001 - an lxml node
    return [
        t for n in row.iter("node") for t in (n.get("text") or "", n.get("content-desc") or "") if t.strip()
    ]


def _box(node) -> tuple[int, ...] | None:  # noqa: ANN001 - an lxml node
    m = re.fullmatch(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]", (node.get("bounds") or "").replace(" ", ""))
    return tuple(int(v) for v in m.groups()) if m else None


__all__ = [
    "ledger_row",
    "list_row",
    "lowest",
    "main_button",
    "menu_row",
    "past_event",
    "review_commit",
    "settled",
    "side_by_side",
]
