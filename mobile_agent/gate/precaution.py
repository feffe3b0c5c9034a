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
from mobile_agent.gate.dialogs import questions
from mobile_agent.gate.finding import Finding
from mobile_agent.gate.harmless import CHEVRON, harmless_words
from mobile_agent.gate.lexicon import is_refusal, topic_kind
from mobile_agent.gate.pages import list_row, lowest, past_event, settled, side_by_side
from mobile_agent.gate.potential import Potential, potential_of
from mobile_agent.screen.context import ScreenReader, TargetContext
from mobile_agent.screen.labels import labels_of
from mobile_agent.screen.text import amounts, fold, without_amounts
from mobile_agent.screen.viewtree import visible

# Ids that name navigation: the title bar's back, close and up buttons (an icon-font glyph for a label), and a
# dialog's negative button (negativeBtn, btn_refuse) whatever its label says.
_NAVIGATION_ID = re.compile(
    r"^(iv_|tv_|btn_|ib_)?(go_?back|back|nav(igate)?_?(up|back)|home_?as_?up|close|cancel|negative|refuse|decline)"
    r"(_?(btn|button|icon|iv|img))?$",
    re.I,
)
# What a page's statements may say its main button does when its label is unknown: money moving, data wiped.
_PAGE_TOPICS = frozenset({"pay", "transfer", "order", "delete"})
_SHEET_MAX = 0.6  # of the screen's area: a card or sheet is smaller; a layer as big as a page is the page
_BUTTON_LABEL_MAX = (
    16  # folded characters: "立即支付 ¥99.00", "Place your order"; a row or a sentence is longer
)


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
    if any(_NAVIGATION_ID.search(i.rsplit("/", 1)[-1]) for i in ctx.ids[:1]):
        return "its id names navigation"
    label = " ".join(labels).strip()
    said = harmless_words(labels)
    if said is not None:
        return said
    if label and CHEVRON.search(label):
        return "a row that opens a page"
    if list_row(ctx) and not side_by_side(ctx):
        return "a row of a list"
    if re.fullmatch(r"[+\-−－＋]|\d{1,3}", label) or stepper(reader, target):
        return "a stepper"
    return None


def primary_role(reader: ScreenReader, ctx: TargetContext) -> str | None:
    """Which primary control of its screen the target is: "sheet button", "main button" (the page's commit: on
    its bottom bar, or in the last row of buttons under its content), "title action" (the right of the title bar: ✓,
    保存, Send), "card button" (the one button of a card that states what it costs), or None (a control among many:
    the word rules judge it)."""
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
    b = target.bounds
    if b is None:
        return None
    # Sizes and places are the target's pane's: a foldable's or tablet's two panes each have their own bottom bar.
    left, top, right, bottom = pane_of(reader, target)
    pane_w, pane_h = right - left, bottom - top
    width = b.right - b.left
    on_bottom_bar = b.top >= top + 0.85 * pane_h and width >= 0.25 * pane_w
    # The last row of buttons below the page's content (a form's or a review's commit, [Cancel] [Continue]), not a
    # row near the top.
    last_row = width >= 0.25 * pane_w and b.top >= top + 0.35 * pane_h and lowest(reader, ctx)
    if on_bottom_bar or last_row:
        return "main button"
    if b.bottom <= top + 0.12 * pane_h and b.left >= left + 0.55 * pane_w:
        return "title action"
    if card_of(reader, target) is not None:
        return "card button"
    if _priced_button(target, ctx):
        return "priced button"
    return None


def pane_of(reader: ScreenReader, target) -> tuple[int, int, int, int]:  # noqa: ANN001 - an Element
    """The box of the pane the target is in: the nearest ancestor at least half the screen tall that stands beside
    a sibling of its own height (a list-detail layout, a foldable's two panes), else the whole screen."""
    screen = reader.screen
    node = target.node
    while (parent := node.getparent()) is not None and parent.tag == "node":
        box = _box(node)
        if (
            box is not None
            and box[3] - box[1] >= 0.5 * screen.height
            and box[2] - box[0] < 0.9 * screen.width
        ):
            for sibling in parent.iterchildren("node"):
                other = _box(sibling)
                if sibling is node or other is None or other[3] - other[1] < 0.8 * (box[3] - box[1]):
                    continue
                if other[0] >= box[2] - 5 or other[2] <= box[0] + 5:  # side by side, not overlapping
                    return box
        node = parent
    return 0, 0, screen.width, screen.height


def _box(node) -> tuple[int, int, int, int] | None:  # noqa: ANN001 - an lxml node
    m = re.fullmatch(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]", (node.get("bounds") or "").replace(" ", ""))
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4))) if m else None


_BALANCE = re.compile(r"余额|零钱|账户|账号|卡|balance|account|card|wallet|savings|checking")


def _priced_button(target, ctx: TargetContext) -> bool:  # noqa: ANN001 - an Element
    """A button that states its own price ("Rent HD $3.99", "¥6 开通"): pressing it is what costs that much."""
    if "Button" not in target.class_name:
        return False  # a row that shows a fare or a balance opens its breakdown
    label = " ".join(dict.fromkeys(ctx.labels))
    if not amounts(label):
        return False
    rest = without_amounts(label)
    # A few words beside the price ("Rent HD", "开通"); a card that shows a balance names a place ("零钱 ¥25.00 余额").
    return len(fold(rest)) <= 10 and _BALANCE.search(fold(rest)) is None


def card_of(reader: ScreenReader, target):  # noqa: ANN001, ANN201 - Elements
    """The card the target is the one button of: the nearest ancestor (three levels at most) smaller than a third
    of the screen that states something (a price, a payment method) and holds no other button."""
    node = target.node
    for _ in range(3):
        node = node.getparent()
        if node is None or node.tag != "node":
            return None
        card = reader.element(node)
        if card is None or card.bounds is None:
            continue
        c = card.bounds
        if (c.right - c.left) * (c.bottom - c.top) >= reader.screen.width * reader.screen.height / 3:
            return None
        buttons = [n for n in node.iter("node") if n.get("clickable") == "true" and n is not target.node]
        inside = {id(d) for b in buttons for d in b.iter("node")} | {id(d) for d in target.node.iter("node")}
        statements = [n for n in node.iter("node") if (n.get("text") or "").strip() and id(n) not in inside]
        if statements:
            # The card's first line (its title, often a link to the app) is no commit; one other control at most.
            texts = [n for n in node.iter("node") if (n.get("text") or n.get("content-desc") or "").strip()]
            first = min(texts, key=lambda n: _top(reader, n), default=None)
            if len(buttons) > 1 or first is not None and target.node in (first, *first.iterancestors("node")):
                return None
            return card
    return None


def _top(reader: ScreenReader, node) -> int:  # noqa: ANN001 - an lxml node
    e = reader.element(node)
    return e.bounds.top if e is not None and e.bounds is not None else 1 << 30


def scope_potential(reader: ScreenReader, ctx: TargetContext, role: str) -> Potential | None:
    """The potential of what the primary control commits: its sheet, its card, or its page. What is typed into a
    field (a price filter's ¥50) is the user's input, not what the screen asks for. A card's bare price is what a
    feed shows on every item: a card commits only with more (免密支付, a renewing price, a payee)."""
    if role == "priced button":
        price = amounts(" ".join(ctx.labels))
        return Potential("pay", (f"amount {price[0].text}", "its own label")) if price else None
    scope_element = ctx.container if role == "sheet button" else None
    if role == "card button" and ctx.target is not None:
        scope_element = card_of(reader, ctx.target)
    nodes = scope_element.node.iter("node") if scope_element is not None else reader.tree.root.iter("node")
    texts = [
        t
        for n in nodes
        if (e := reader.element(n)) is not None and visible(e) and not reader.is_edit(e)
        for t in labels_of(e)
    ]
    if role == "sheet button":
        found = potential_of(texts, None, in_sheet=True)
    elif role == "card button":
        found = potential_of(texts)
        if found is not None and all(sig.startswith("amount ") for sig in found.signals):
            return None
    else:
        found = potential_of([*reader.page_title(), *texts], reader)
    if found is not None:
        return found
    # No money, data or message, but the scope's own words say what a yes does (清除所有数据, 要给张伟打电话吗？):
    # a button in a word nobody listed goes on with it.
    if role == "card button":
        return None
    statements = list(ctx.statements) if role == "sheet button" else [*reader.page_title(), *ctx.statements]
    named = topic_kind(questions(statements))
    if named is None or any(is_refusal(t) for t in statements) or past_event(statements[:3]):
        return None  # "当前时间不允许委托 [确定]": a notice that nothing happened
    if role != "sheet button" and named[0] not in _PAGE_TOPICS:
        return None  # a page's instructions speak of sending and calling ("Can't send an SMS with your code")
    return Potential(named[0], (f"text '{named[1][:40]}'",))


def precaution(reader: ScreenReader, ctx: TargetContext, labels: list[str]) -> Finding | None:
    """A primary control, not known to be harmless, on a scope with potential: ask, with the potential's kind."""
    role = primary_role(reader, ctx)
    harmless = known_harmless(reader, ctx, labels) if role is not None else None
    if role == "priced button" and harmless == "a tab":
        harmless = None  # Trailer | Rent HD $3.99 | Buy HD $14.99: a strip of actions, each with its price
    if role is None or harmless is not None:
        return None
    if role != "sheet button" and settled(reader, ctx) is not None:
        return None  # a receipt: what the page states already happened
    potential = scope_potential(reader, ctx, role)
    if potential is None:
        return None
    label = " ".join(labels)[:30] or "an unnamed control"
    where = {"sheet button": "sheet", "card button": "card", "priced button": "button"}.get(role, "page")
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
    if len(words) > _BUTTON_LABEL_MAX or len(set(ctx.labels)) > 2 or CHEVRON.search(" ".join(ctx.labels)):
        return False
    return not list_row(ctx) or side_by_side(ctx)


__all__ = ["card_of", "known_harmless", "precaution", "primary_role", "scope_potential"]
