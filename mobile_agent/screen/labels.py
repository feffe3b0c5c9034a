"""What names a node of a view tree: its text and description, a label drawn one character per child view, and
the parent a person sees around it (past layout-only wrappers). Read-only over lxml nodes of a uiautomator dump."""

from __future__ import annotations

import re
from collections.abc import Iterator

from lxml import etree

from mobile_agent.screen.viewtree import Element

# Private-use code points are icon-font glyphs (a check mark, a trash can drawn by a web font): they name nothing a
# person can read, so a control labelled only with one is blind.
_ICON_GLYPH = re.compile("[\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd]")


def readable(text: str) -> str:
    return _ICON_GLYPH.sub("", text).strip()


def label_of(e: Element) -> str:
    return (labels_of(e) or [""])[0]


def labels_of(e: Element) -> list[str]:
    """Text and description both: when they disagree (text 取消, description 确认付款) the gate reads both. A label
    drawn one character per child view (see :func:`spelled`) is read as the word, on the node that holds the
    characters; the characters themselves name nothing on their own."""
    text = readable(e.text)
    if text and len(text) <= 1 and word_of(e.node) is not None:
        return []
    text = text or spelled(e.node)
    return list(dict.fromkeys(t for t in (text, readable(e.content_desc)) if t))


_WORD_NODES = 64  # views under a word drawn one character each (about 30 characters and their holders)
_WORD_CLIMB = 4  # levels from a character up to the node that holds the word


def _piece_text(node: etree._Element) -> str | None:
    """The one character a node draws, or None when it draws none or more than one."""
    text = node.get("text") or ""
    if not text or (node.get("content-desc") or "").strip():
        return None
    return text if len(text) == 1 or len(readable(text)) == 1 else None


def _pieces(node: etree._Element) -> list[tuple[tuple[int, int, int, int], str]] | None:
    """The characters that spell ``node``'s label, in reading order: its own text empty, every text among its own
    descendants one character, at least two of them, all on one line."""
    if readable(node.get("text") or ""):
        return None
    if is_keyboard(node.get("package") or ""):
        return None
    if len(node) == 0:
        return None
    pieces = []
    for count, n in enumerate(_near_descendants(node)):
        if count >= _WORD_NODES:
            return None  # a page or a list, not a word
        if not n.get("text") and not (n.get("content-desc") or "").strip():
            continue
        ch, box = _piece_text(n), _box(n)
        if ch is None or box is None:
            return None
        pieces.append((box, ch))
    if len(pieces) < 2:
        return None
    first = pieces[0][0]
    if any(not first[1] <= (b[1] + b[3]) / 2 < first[3] for b, _ in pieces):
        return None  # several lines of single characters: a keypad or a grid, not a word
    return sorted(pieces, key=lambda p: p[0][0])


def _near_descendants(node: etree._Element) -> Iterator[etree._Element]:
    """Children and grandchildren outside other controls: where the characters of a word are drawn."""
    for child in node.iterchildren("node"):
        if child.get("clickable") == "true":
            continue
        yield child
        for grandchild in child.iterchildren("node"):
            if grandchild.get("clickable") != "true":
                yield grandchild


def spelled(node: etree._Element) -> str:
    """The label of a node whose own text is empty and whose children draw it one character each, left to right
    ("确","认","支","付" -> "确认支付"); "" for any other node."""
    pieces = _pieces(node)
    return readable("".join(ch for _, ch in pieces)) if pieces else ""


def word_of(node: etree._Element) -> etree._Element | None:
    """The node whose spelled label this one-character node is part of, if any."""
    if _piece_text(node) is None:
        return None
    for up, ancestor in enumerate(node.iterancestors("node")):
        if up >= _WORD_CLIMB or readable(ancestor.get("text") or ""):
            return None
        if _pieces(ancestor):
            return ancestor
        if clickable(ancestor):
            return None
    return None


def clickable(node: etree._Element) -> bool:
    return node.get("clickable") == "true" or node.get("long-clickable") == "true"


# Input methods: Gboard, Sogou, Baidu, iFlytek, Samsung, SwiftKey, and the simulator's own keyboard.
_KEYBOARD_PACKAGE = re.compile(r"inputmethod|\.input\b|\.ime\b|honeyboard|swiftkey|keyboard", re.I)


def is_keyboard(package: str) -> bool:
    """The on-screen keyboard's window: its keys type into the app below, they are not the app's controls."""
    return bool(package) and _KEYBOARD_PACKAGE.search(package) is not None


def own_descendants(node: etree._Element) -> Iterator[etree._Element]:
    """Descendants not inside another clickable: their labels belong to this control."""
    for child in node.iterchildren("node"):
        if child.get("clickable") == "true":
            continue
        yield child
        yield from own_descendants(child)


def layout_parent(node: etree._Element) -> etree._Element | None:
    """The parent a person sees: past layout-only wrappers (no text, description or id, not clickable, holding only
    this one child within their box) around ``node``; None at a window's top."""
    child, parent = node, node.getparent()
    while parent is not None and parent.tag == "node" and _wrapper(parent, child):
        child, parent = parent, parent.getparent()
    return parent if parent is not None and parent.tag == "node" else None


def _wrapper(node: etree._Element, child: etree._Element) -> bool:
    if clickable(node) or any((node.get(k) or "").strip() for k in ("text", "content-desc", "resource-id")):
        return False
    if len(list(node.iterchildren("node"))) != 1:
        return False
    outer, inner = _box(node), _box(child)
    return (
        outer is not None
        and inner is not None
        and (outer[0] <= inner[0] and outer[1] <= inner[1] and outer[2] >= inner[2] and outer[3] >= inner[3])
    )


_BOX = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


def _box(node: etree._Element) -> tuple[int, int, int, int] | None:
    m = _BOX.fullmatch((node.get("bounds") or "").replace(" ", ""))
    return tuple(int(v) for v in m.groups()) if m else None  # type: ignore[return-value]


__all__ = [
    "clickable",
    "is_keyboard",
    "label_of",
    "labels_of",
    "layout_parent",
    "own_descendants",
    "readable",
    "spelled",
    "word_of",
]
