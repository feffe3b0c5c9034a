"""Layouts several simulated apps build the same way, out of the view builders in kit.py: a column of text lines
beside a picture (list rows, cards) and the result page after a payment."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mobile_agent.sim.world import kit
from mobile_agent.sim.world.base import Ctx
from mobile_agent.sim.world.node import FRAME, Color, Node, Style


@dataclass(frozen=True)
class Line:
    """One text line of a column: its top and bottom as offsets from the row's top, its words and its look."""

    top: int
    bottom: int
    value: str
    size: int
    fg: Color
    bold: bool = False
    rid: str = ""
    right: int | None = None  # its own right edge, where it stops short of the column's


def text_column(left: int, right: int, top: int, lines: Sequence[Line]) -> list[Node]:
    """The lines as text nodes between `left` and `right`, placed from the row's `top`."""
    return [
        kit.text(
            (left, top + line.top, right if line.right is None else line.right, top + line.bottom),
            line.value,
            line.size,
            line.fg,
            bold=line.bold,
            rid=line.rid,
        )
        for line in lines
    ]


@dataclass(frozen=True)
class DoneButton:
    """The result page's button: it takes the app back to its first page."""

    bg: Color
    radius: int
    rid: str
    fg: Color = kit.WHITE


def done_page(
    ctx: Ctx,
    *,
    check: Color,
    title: str,
    title_rid: str,
    amount: str,
    amount_size: int,
    note: str,
    done: DoneButton,
    grey: Color,
    dark: Color,
) -> Node:
    """A tick, a bold title, the amount, a note under it, and 完成: what a finished payment shows."""
    W, px, top = ctx.W, ctx.px, ctx.top
    root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=(255, 255, 255)))
    root.add(kit.glyph((W // 2 - px(90), top + px(260), W // 2 + px(90), top + px(440)), "check", fg=check))
    root.add(
        kit.text(
            (0, top + px(480), W, top + px(580)),
            title,
            px(60),
            dark,
            bold=True,
            align="center",
            rid=title_rid,
        )
    )
    root.add(kit.text((0, top + px(600), W, top + px(680)), amount, amount_size, dark, align="center"))
    root.add(kit.text((0, top + px(700), W, top + px(760)), note, px(38), grey, align="center"))
    root.add(
        kit.button(
            (px(200), top + px(860), W - px(200), top + px(980)),
            "完成",
            ctx.reset_to_root,
            size=px(44),
            bg=done.bg,
            fg=done.fg,
            radius=done.radius,
            rid=done.rid,
        )
    )
    return root
