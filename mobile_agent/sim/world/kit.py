"""Small view builders shared by the simulated apps: text, buttons, bars, fields, switches, scrolling lists."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mobile_agent.sim.world.base import Ctx
from mobile_agent.sim.world.node import (
    BUTTON,
    EDIT,
    FRAME,
    IMAGE,
    LINEAR,
    RECYCLER,
    SEEKBAR,
    SWITCH,
    TEXT,
    VIEWGROUP,
    Color,
    Node,
    Rect,
    Style,
)

WHITE = (255, 255, 255)
WECHAT_GREEN = (7, 193, 96)
MEITUAN_YELLOW = (255, 209, 0)
ALIPAY_BLUE = (22, 119, 255)
RED = (250, 81, 81)


def text(
    bounds: Rect,
    value: str,
    size: int,
    fg: Color = (25, 25, 25),
    *,
    bold: bool = False,
    align: str = "left",
    rid: str = "",
    bg: Color | None = None,
    radius: int = 0,
    on_click: Callable[[], None] | None = None,
    desc: str = "",
    cls: str = TEXT,
    pad: int = 0,
) -> Node:
    return Node(
        cls,
        bounds,
        text=value,
        rid=rid,
        desc=desc,
        clickable=on_click is not None,
        on_click=on_click,
        style=Style(bg=bg, fg=fg, size=size, bold=bold, align=align, radius=radius, pad=pad),
    )


def button(
    bounds: Rect,
    label: str,
    on_click: Callable[[], None] | None,
    *,
    size: int,
    bg: Color,
    fg: Color = WHITE,
    rid: str = "",
    radius: int = 12,
    enabled: bool = True,
    bold: bool = False,
) -> Node:
    node = text(bounds, label, size, fg, bold=bold, align="center", rid=rid, bg=bg, radius=radius, cls=BUTTON)
    node.enabled = enabled
    node.clickable = True
    node.on_click = on_click if enabled else None
    return node


def glyph(
    bounds: Rect,
    name: str,
    on_click: Callable[[], None] | None = None,
    *,
    desc: str = "",
    rid: str = "",
    fg=None,
) -> Node:
    return Node(
        IMAGE,
        bounds,
        rid=rid,
        desc=desc,
        clickable=on_click is not None,
        on_click=on_click,
        style=Style(image=f"glyph:{name}", fg=fg or (25, 25, 25)),
    )


def image(bounds: Rect, kind: str, seed: str, *, rid: str = "", desc: str = "", radius: int = 0) -> Node:
    return Node(IMAGE, bounds, rid=rid, desc=desc, style=Style(image=f"{kind}:{seed}", radius=radius))


def icon_cell(
    bounds: Rect,
    name: str,
    *,
    icon: tuple[int, int],
    label: tuple[int, int],
    size: int,
    fg: Color,
    rid: str = "",
    on_click: Callable[[], None] | None = None,
) -> Node:
    """A grid cell: a picture icon centred at its top and the name under it.

    ``icon`` is (half width, height); ``label`` is (top, bottom) of the name, both offsets from the cell's top.
    """
    left, top, right, bottom = bounds
    centre = (left + right) // 2
    return box(
        bounds,
        image((centre - icon[0], top, centre + icon[0], top + icon[1]), "icon", name, desc=name),
        text((left, top + label[0], right, top + label[1]), name, size, fg, align="center"),
        rid=rid,
        on_click=on_click,
    )


def box(
    bounds: Rect,
    *children: Node,
    bg: Color | None = None,
    cls: str = FRAME,
    rid: str = "",
    radius: int = 0,
    on_click: Callable[[], None] | None = None,
    desc: str = "",
) -> Node:
    return Node(
        cls,
        bounds,
        rid=rid,
        desc=desc,
        children=list(children),
        clickable=on_click is not None,
        on_click=on_click,
        style=Style(bg=bg, radius=radius),
    )


def field(
    ctx: Ctx,
    key: str,
    bounds: Rect,
    hint: str,
    *,
    rid: str = "",
    size: int = 0,
    bg: Color | None = None,
    radius: int = 0,
    password: bool = False,
) -> Node:
    size = size or ctx.px(46)
    return Node(
        EDIT,
        bounds,
        text=ctx.field(key),
        hint=hint,
        rid=rid,
        clickable=True,
        long_clickable=True,
        focusable=True,
        focused=ctx.page.focus == key,
        password=password,
        field_key=key,
        style=Style(bg=bg, fg=ctx.pal.text, size=size, radius=radius, pad=ctx.px(24)),
    )


def switch(
    bounds: Rect, checked: bool, on_toggle: Callable[[], None], *, rid: str = "", desc: str = ""
) -> Node:
    return Node(
        SWITCH,
        bounds,
        text="ON" if checked else "OFF",  # real Switch widgets dump their on/off text
        rid=rid,
        desc=desc,
        checkable=True,
        checked=checked,
        clickable=True,
        focusable=True,
        on_click=on_toggle,
        style=Style(image=f"switch:{int(checked)}"),
    )


def seekbar(
    bounds: Rect, value: int, on_set: Callable[[int], None], *, rid: str = "", desc: str = ""
) -> Node:
    """A 0-100 slider: a tap or a drag sets the value from the x position."""
    left, _, right, _ = bounds

    def from_x(x: int) -> int:
        return max(0, min(100, round((x - left) * 100 / max(1, right - left))))

    node = Node(
        SEEKBAR,
        bounds,
        text=str(value),
        rid=rid,
        desc=desc,
        clickable=True,
        focusable=True,
        scrollable=False,
        style=Style(image=f"seek:{value}"),
    )
    node.on_drag = lambda x1, y1, x2, y2: on_set(from_x(x2))
    node.on_tap_at = lambda x, y: on_set(from_x(x))
    return node


def top_bar(
    ctx: Ctx,
    title: str,
    *,
    back: bool = True,
    rid_prefix: str = "",
    right: list[Node] | None = None,
    bg: Color | None = None,
    fg: Color | None = None,
) -> Node:
    fg = fg or ctx.pal.text
    h = ctx.px(132)
    top = ctx.top
    bar = box(
        (0, top, ctx.W, top + h),
        bg=bg or ctx.pal.bar,
        cls=VIEWGROUP,
        rid=rid_prefix and f"{rid_prefix}action_bar",
    )
    if back:
        bar.add(
            glyph(
                (ctx.px(20), top + ctx.px(26), ctx.px(100), top + ctx.px(106)),
                "back",
                ctx.pop,
                desc="返回",
                fg=fg,
            )
        )
    bar.add(
        text(
            (ctx.px(150), top, ctx.W - ctx.px(150), top + h),
            title,
            ctx.px(50),
            fg,
            bold=True,
            align="center" if back else "left",
            rid=rid_prefix and f"{rid_prefix}title",
        )
    )
    for node in right or []:
        bar.add(node)
    return bar


def divider(ctx: Ctx, y: int, left: int = 0) -> Node:
    return Node(LINEAR, (left, y, ctx.W, y + max(1, ctx.px(2))), style=Style(bg=ctx.pal.divider))


def scroll_list(
    ctx: Ctx,
    key: str,
    area: Rect,
    heights: Sequence[int],
    make: Callable[[int, Rect], Node],
    *,
    rid: str = "",
    horizontal: bool = False,
    bg: Color | None = None,
) -> Node:
    """A RecyclerView: only rows that intersect the area are children; swipes move ``page.scroll[key]``."""
    left, top, right, bottom = area
    total = sum(heights)
    visible = bottom - top
    max_scroll = max(0, total - visible)
    offset = max(0, min(ctx.page.scroll.get(key, 0), max_scroll))
    container = Node(RECYCLER, area, rid=rid, scrollable=max_scroll > 0, focusable=True, style=Style(bg=bg))
    y = top - offset
    for i, h in enumerate(heights):
        row_top, row_bottom = y, y + h
        y += h
        if row_bottom <= top or row_top >= bottom:
            continue
        clipped_top, clipped_bottom = max(row_top, top), min(row_bottom, bottom)
        if clipped_bottom - clipped_top < ctx.px(12):
            continue
        container.add(make(i, (left, row_top, right, row_bottom)))
    for child in container.children:  # the dump shows visible bounds, clipped to the list
        _clip(child, area)

    def on_scroll(dx: int, dy: int) -> None:
        new = max(0, min(offset + dy, max_scroll))
        if new != offset:
            ctx.page.scroll[key] = new
            ctx.changed()

    if max_scroll > 0:
        container.on_scroll = on_scroll
    return container


def _clip(node: Node, area: Rect) -> None:
    left, top, right, bottom = node.bounds
    node.bounds = (
        max(left, area[0]),
        max(top, area[1]),
        min(right, area[2]),
        max(min(bottom, area[3]), max(top, area[1])),
    )
    node.children = [c for c in node.children if c.bounds[3] > area[1] and c.bounds[1] < area[3]]
    for child in node.children:
        _clip(child, area)


def tab_bar(
    ctx: Ctx,
    labels: Sequence[str],
    selected: int,
    on_select: Callable[[int], None],
    *,
    rid: str,
    accent: Color,
    icons: Sequence[str] | None = None,
) -> Node:
    h = ctx.px(150)
    top = ctx.bottom - h
    bar = box((0, top, ctx.W, ctx.bottom), bg=ctx.pal.surface if not ctx.dark else ctx.pal.bar, cls=LINEAR)
    width = ctx.W // len(labels)
    for i, label in enumerate(labels):
        fg = accent if i == selected else ctx.pal.text
        cell = box(
            (i * width, top, (i + 1) * width, ctx.bottom),
            cls=LINEAR,
            rid=rid,
            on_click=(lambda i=i: on_select(i)),
        )
        cell.selected = i == selected
        cell.add(
            glyph(
                (
                    i * width + width // 2 - ctx.px(34),
                    top + ctx.px(16),
                    i * width + width // 2 + ctx.px(34),
                    top + ctx.px(84),
                ),
                icons[i] if icons else "dot",
                fg=fg,
            )
        )
        cell.add(
            text(
                (i * width, top + ctx.px(88), (i + 1) * width, ctx.bottom - ctx.px(8)),
                label,
                ctx.px(32),
                fg,
                align="center",
            )
        )
        bar.add(cell)
    return bar
