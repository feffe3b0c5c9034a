"""Right-to-left screens are read in their mirror image.

Arabic, Hebrew, Persian and Urdu layouts mirror the whole screen: the back arrow moves to the right end of the title
bar, the title bar's action to the left, the send arrow to the left end of the compose row. The gate's rules of
place (a title bar's action at its end, back at its start, the last control of a written message's row sends it)
are written for the reading direction, so an RTL screen is judged as its mirror image: every box, and the point
of the action, flipped left to right. An RTL script in a layout the app did not mirror (its back arrow alone at the
top left) is read as it is. What a control is still comes from its role and its words, never from its
side alone.
"""

from __future__ import annotations

import copy
import dataclasses
import re
import unicodedata

from mobile_agent.actions import Action, Point
from mobile_agent.screen.viewtree import ViewTree

_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
_RTL_SHARE = 0.5  # of the screen's letters in a right-to-left script


def right_to_left(tree: ViewTree) -> bool:
    """Most letters the app's windows show are in a right-to-left script (the system bar's aside)."""
    rtl = ltr = 0
    for node in tree.root.iter("node"):
        if (node.get("package") or "").startswith("com.android.systemui"):
            continue
        for text in (node.get("text") or "", node.get("content-desc") or ""):
            for ch in text:
                direction = unicodedata.bidirectional(ch)
                rtl += direction in ("R", "AL")
                ltr += direction == "L"
    return rtl > 0 and rtl >= _RTL_SHARE * (rtl + ltr)


def mirrored_layout(tree: ViewTree, width: int, height: int) -> bool:
    """The screen is laid out right to left: its script is, and its title bar does not say otherwise. Apps that
    never declared RTL support show Arabic or Uyghur in a left-to-right layout, their back arrow alone at the top
    left; a mirrored title bar has its lone control (the back arrow) at the top right."""
    if not right_to_left(tree):
        return False
    corners = {"left": False, "right": False}
    for node in tree.root.iter("node"):
        if node.get("clickable") != "true" or (node.get("package") or "").startswith("com.android.systemui"):
            continue
        m = _BOUNDS.fullmatch((node.get("bounds") or "").replace(" ", ""))
        if m is None:
            continue
        left, _top, right, bottom = (int(v) for v in m.groups())
        if bottom > 0.12 * height:
            continue
        corners["left"] |= right <= 0.2 * width
        corners["right"] |= left >= 0.8 * width
    return not (corners["left"] and not corners["right"])


def mirrored_tree(tree: ViewTree, width: int) -> ViewTree:
    """The tree with every box flipped left to right on a screen ``width`` wide."""
    root = copy.deepcopy(tree.root)
    for node in root.iter("node"):
        m = _BOUNDS.fullmatch((node.get("bounds") or "").replace(" ", ""))
        if m is None:
            continue
        left, top, right, bottom = (int(v) for v in m.groups())
        node.set("bounds", f"[{width - right},{top}][{width - left},{bottom}]")
    return ViewTree(root)


def mirrored_action(action: Action, width: int) -> Action:
    """The action with its points flipped (a swipe's direction with them)."""
    if action.point is None and action.end is None:
        return action
    flip = lambda p: Point(width - 1 - p.x, p.y) if p is not None else None  # noqa: E731
    return dataclasses.replace(action, point=flip(action.point), end=flip(action.end))


def mirrored_words(words, width: int):  # noqa: ANN001, ANN201 - OcrWords
    """OCR words read off the real frame, their boxes flipped into the mirror image."""
    if words is None:
        return None
    return [
        dataclasses.replace(w, box=(width - w.box[2], w.box[1], width - w.box[0], w.box[3])) for w in words
    ]


__all__ = ["mirrored_action", "mirrored_layout", "mirrored_tree", "mirrored_words", "right_to_left"]
