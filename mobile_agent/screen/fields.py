"""Fields and rows read off a screen: PIN boxes, the caption that labels a field from outside it, and the compose row
whose last control sends what is written in it."""

from __future__ import annotations

from mobile_agent.screen.context import ScreenReader
from mobile_agent.screen.labels import labels_of
from mobile_agent.screen.text import fold
from mobile_agent.screen.viewtree import Element, visible


def pin_boxes(reader: ScreenReader) -> list[Element]:
    """A row of four or more look-alike one-character boxes side by side (a PIN or code drawn as boxes), or []."""
    for parent in {id(e.node.getparent()): e.node.getparent() for e in reader.visible}.values():
        if parent is None:
            continue
        row = [reader.element(c) for c in parent.iterchildren("node") if reader.element(c) is not None]
        row = [e for e in row if visible(e) and e.bounds is not None]
        if len(row) < 4 or len(row) > 8 or len({e.class_name for e in row}) != 1:
            continue
        w0, h0 = row[0].bounds.right - row[0].bounds.left, row[0].bounds.bottom - row[0].bounds.top  # type: ignore[union-attr]
        same = all(
            abs((e.bounds.right - e.bounds.left) - w0) <= 0.1 * w0  # type: ignore[union-attr]
            and abs((e.bounds.bottom - e.bounds.top) - h0) <= 0.1 * h0  # type: ignore[union-attr]
            and e.bounds.top == row[0].bounds.top  # type: ignore[union-attr]
            and len(fold(e.text)) <= 1
            for e in row
        )
        if same and w0 <= 0.25 * reader.screen.width:
            return row
    return []


def caption_of(reader: ScreenReader, e: Element) -> list[str]:
    """The statement that labels a field from outside it: the text right above it or right before it on its row
    ("暗証番号" over an empty box)."""
    b = e.bounds
    if b is None:
        return []
    best: tuple[int, Element] | None = None
    for o in reader.visible:
        ob = o.bounds
        if ob is None or o is e or not labels_of(o) or reader.in_control(o.node):
            continue
        above = 0 <= b.top - ob.bottom <= 120 and ob.left < b.right and b.left < ob.right
        before = ob.top < b.bottom and b.top < ob.bottom and 0 <= b.left - ob.right <= 120
        gap = (b.top - ob.bottom) if above else (b.left - ob.right) if before else None
        if gap is not None and (best is None or gap < best[0]):
            best = (gap, o)
    return labels_of(best[1]) if best else []


def input_rows(reader: ScreenReader) -> list[Element]:
    """Fields holding typed text: text fields, and the wide clickable text holder of a bottom compose bar
    (Compose and web pages draw message fields as plain views)."""
    out = []
    for e in reader.visible:
        b = e.bounds
        if b is None or not e.text.strip() or e.text.strip() == (e.node.get("hint") or "").strip():
            continue
        if reader.is_edit(e) or (
            e.class_name.endswith(".View")
            and e.node.get("clickable") == "true"
            and b.right - b.left >= 0.5 * reader.screen.width
            and b.top >= 0.8 * reader.screen.height
        ):
            out.append(e)
    return out


def ends_input_row(reader: ScreenReader, e: Element) -> bool:
    """The last control on the row of a field that holds typed text, in the lower half where compose bars sit
    (at the bottom, or over the keyboard): where every chat puts its send button. A form's field ("请输入验证码 |
    获取验证码") sits higher."""
    b = e.bounds
    if b is None:
        return False
    cy = (b.top + b.bottom) // 2
    for f in input_rows(reader):
        fb = f.bounds
        if fb is None or f is e or not fb.top - 40 <= cy <= fb.bottom + 40 or b.left < fb.right - 10:
            continue
        if fb.top < 0.45 * reader.screen.height:
            continue
        further = [
            o
            for o in reader.visible
            if o.bounds is not None
            and o.node.get("clickable") == "true"
            and o.bounds.left >= b.right
            and o.bounds.top < b.bottom
            and b.top < o.bounds.bottom
        ]
        if not further:
            return True
    return False


__all__ = ["caption_of", "ends_input_row", "input_rows", "pin_boxes"]
