"""The control under the finger has no name in the tree (an icon, a WebView span, a canvas): read the pixels, then
what surrounds it, and fail closed where nothing can be read in an app that can pay, send or delete."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mobile_agent.actions import Point
from mobile_agent.gate.finding import Finding, Situation, with_model
from mobile_agent.gate.harmless import harmless_words
from mobile_agent.gate.lexicon import MONEY_KINDS, PASSWORD_HINT, is_no, is_yes, topic_kind, verb_kind
from mobile_agent.gate.potential import potential_of
from mobile_agent.screen.context import ScreenReader, TargetContext
from mobile_agent.screen.labels import is_keyboard, layout_parent
from mobile_agent.screen.text import amounts, fold

if TYPE_CHECKING:
    from mobile_agent.screen.ocr import OcrWord


def blind_finding(s: Situation, ctx: TargetContext, model: tuple[str, str] | None) -> Finding | None:
    """Nothing in the tree names the control under the finger: read the pixels, then what surrounds it."""
    described = ctx.describe()
    reader = s.reader
    if reader is not None and _idle_overlay(reader, ctx, s.package):
        # A picture-in-picture video over the page: the finger lands in that window, which only shows its controls.
        return Finding(model[0], "model", described, model[1], (model[1],)) if model else None
    if reader is not None and not ctx.takes_touch and _opaque_surface(reader, ctx):
        return _opaque(s, ctx, model)
    if reader is not None and not ctx.takes_touch and not reader.is_empty() and _any_clickable(reader):
        surface = _blind_surface(s, ctx)
        if surface is not None:
            return with_model(surface, model)
        return Finding(model[0], "model", described, model[1], (model[1],)) if model else None
    if reader is not None and _navigation_corner(reader, ctx.target):
        return Finding(model[0], "model", described, model[1], (model[1],)) if model else None
    if ctx.target is not None and ctx.target.node.get("checkable") == "true":
        return _toggle(ctx)
    if s.ocr_words is not None:
        words = s.ocr_words(ctx.point)
        if words is not None:
            read, finding = _from_ocr(ctx, words, model)
            if read:  # the pixels name the control (or its dialog): that settles it
                return finding
    if model is not None:
        return Finding(model[0], "model", described, model[1], (model[1], "no label under the finger"))
    if reader is None or reader.is_empty() or not _any_clickable(reader):
        # Flutter, canvas, a web page drawn without nodes: nothing can be read, so nothing can be cleared.
        if not s.can_matter:
            return None
        return Finding(
            "sensitive",
            "blind",
            described,
            "the view tree names nothing here, in an app that can pay, send or delete",
            ("no readable node", f"app {s.package or 'unknown'}"),
        )
    target = ctx.target
    area = (
        (target.bounds.right - target.bounds.left) * (target.bounds.bottom - target.bounds.top)
        if target and target.bounds
        else 0
    )
    if area > 0.5 * reader.screen.width * reader.screen.height:
        return None  # a scrim behind a sheet or a page background: a tap there closes or does nothing
    if target is not None and stepper(reader, target):
        return None  # the − / + of a quantity: it changes a number on the page, nothing is committed
    if ctx.container is not None:
        texts = [*ctx.context_texts]
        where = "in a dialog that mentions"
    else:
        wide = (
            target is not None
            and target.bounds is not None
            and (target.bounds.right - target.bounds.left >= 0.4 * reader.screen.width)
        )
        # A wide button is the page's main action: the whole page says what it does. A small icon: what is near it.
        texts = reader.statements_near(ctx.point, band=reader.screen.height if wide else 420)
        where = "on a screen that mentions"
    topic = topic_kind(texts)
    money = [m.text for t in texts for m in amounts(t)] if ctx.container is not None else []
    if topic is not None or money:
        kind = topic[0] if topic else "pay"
        said = topic[1] if topic else money[0]
        return Finding(
            kind,
            "blind",
            described,
            f"an unlabelled control {where} '{said}'",
            ("no label under the finger", f"text '{said}'"),
        )
    if (
        ctx.blind
        and s.can_matter
        and target is not None
        and _action_bar(reader, target)
        and not _collection_item(target)
    ):
        # No text, no description, no id: nothing at all says what this control does, in an app that can.
        return Finding(
            "sensitive",
            "blind",
            described,
            "a control with no text, description or id, in an app that can pay, send or delete",
            ("no label, no id", f"app {s.package or 'unknown'}"),
        )
    if ctx.blind and s.can_matter and target is not None and _inside_drawn(target):
        # Flutter or a WebView gives the tree only the boxes of what it draws (its dialog's two buttons as empty
        # views): the words are in the pixels, so what cannot be read cannot be cleared.
        return Finding(
            "sensitive",
            "blind",
            described,
            "an unnamed control of a drawn surface (Flutter, WebView, canvas), in an app that can pay, send or delete",
            ("no label, no id", "drawn surface", f"app {s.package or 'unknown'}"),
        )
    if target is not None and reader.beside_filled_edit(target):
        return Finding(
            "send",
            "blind",
            described,
            "an unlabelled button beside a filled text field",
            ("no label", "filled field"),
        )
    return None


def _idle_overlay(reader: ScreenReader, ctx: TargetContext, package: str) -> bool:
    """The finger lands in a small window of another app floating over the page (picture-in-picture, a bubble)
    that has nothing to touch in it, over no control of the page. Windows are their own roots: the touch goes to the
    window on top, and a window with no control only wakes its own overlay controls. Over a control of the page the
    tree cannot say whether the window takes touches (an overlay may let them through), so the control beneath is
    judged."""
    hit = ctx.hit
    if hit is None or not package or hit.package == package or ctx.takes_touch:
        return False
    window = hit.node
    while window.getparent() is not None and window.getparent().tag == "node":
        window = window.getparent()
    box = reader.element(window)
    if box is None or box.bounds is None or window.get("package") != hit.package:
        return False
    b, screen = box.bounds, reader.screen
    small = (b.right - b.left) * (b.bottom - b.top) <= 0.25 * screen.width * screen.height
    idle = not any(
        n.get("clickable") == "true" or n.get("long-clickable") == "true" for n in window.iter("node")
    )
    return (
        small and idle and not is_keyboard(hit.package) and not hit.package.startswith("com.android.systemui")
    )


def _inside_drawn(target) -> bool:  # noqa: ANN001 - an Element
    """The control is a node a drawing surface exposes (an ancestor is a Flutter, WebView or canvas view)."""
    return any(_DRAWN.search(n.get("class") or "") for n in target.node.iterancestors("node"))


_DRAWN = re.compile(r"WebView|Flutter|SurfaceView|TextureView|GLSurface|Canvas")


def _opaque_surface(reader: ScreenReader, ctx: TargetContext) -> bool:
    """The finger lands on a view the tree cannot see into: a WebView, SurfaceView, TextureView or Flutter view with
    no nodes of its own under the point, or a large childless view that names nothing (a page drawn as pixels; an
    image is a picture)."""
    hit = ctx.hit
    if hit is None or hit.bounds is None or ctx.labels or hit.text.strip() or hit.content_desc.strip():
        return False
    b = hit.bounds
    area = (b.right - b.left) * (b.bottom - b.top)
    drawn = re.search(r"WebView|SurfaceView|TextureView|Flutter|GLSurface|Canvas", hit.class_name) is not None
    childless = not any(True for _ in hit.node.iterchildren("node"))
    picture = re.search(r"Image", hit.class_name) is not None  # a banner or photo is a picture, not a page
    return childless and (drawn or (not picture and area >= 0.2 * reader.screen.width * reader.screen.height))


def _opaque(s: Situation, ctx: TargetContext, model: tuple[str, str] | None) -> Finding | None:
    """A tap into a surface the tree cannot see into: the pixels decide (OCR of the page around the finger), and
    without them, an app that can pay, send or delete asks."""
    if s.ocr_words is not None:
        words = s.ocr_words(ctx.point)
        if words is not None:
            read, finding = _from_ocr(ctx, words, model)
            if read or finding is not None:
                return finding
    if model is not None:
        return Finding(model[0], "model", ctx.describe(), model[1], (model[1], "an opaque surface"))
    if not s.can_matter:
        return None
    return Finding(
        "sensitive",
        "blind",
        ctx.describe(),
        f"a tap into a {ctx.hit.class_name.rsplit('.', 1)[-1] if ctx.hit else 'view'} the tree cannot see into, in an "
        "app that can pay, send or delete",
        ("opaque surface", f"app {s.package or 'unknown'}"),
    )


def _blind_surface(s: Situation, ctx: TargetContext) -> Finding | None:
    """A tap on a surface the tree shows as one unnamed, untouchable view inside a sheet or dialog (a PIN pad drawn as
    one image over a payment sheet): the tree cannot say what is drawn there, so the pixels must, or a person.
    A tap on text that is not a control (a caption, a total beside the button) is read elsewhere: it lands on
    nothing."""
    hit, reader = ctx.hit, s.reader
    if hit is None or reader is None or ctx.labels or hit.text.strip() or hit.content_desc.strip():
        return None
    words = list(ctx.context_texts if ctx.container is not None else ctx.screen_texts)
    topic = topic_kind(words)
    secret = any(PASSWORD_HINT.search(fold(t)) for t in words)
    money = [m.text for t in words for m in amounts(t)]
    if ctx.container is None:
        # A page of its own: only a sizeable surface (a pad drawn as one image) on a page that asks for a secret
        # while it names a payment; a bare spot of a page lands on nothing.
        b, screen = hit.bounds, reader.screen
        big = b is not None and (b.right - b.left) * (b.bottom - b.top) >= 0.1 * screen.width * screen.height
        paying = (topic is not None and topic[0] in MONEY_KINDS) or bool(money)
        if not (big and secret and paying and hit.node.getparent() is not None):
            return None
    elif topic is None and not (secret and money):
        return None
    if s.ocr_words is not None:
        read = s.ocr_words(ctx.point)
        if read is not None:
            settled, finding = _from_ocr(ctx, read, None)
            if settled:
                return finding
    said = topic[1] if topic else money[0]
    kind = topic[0] if topic else "pay"
    return Finding(
        kind,
        "blind",
        ctx.describe(),
        f"a tap on an unnamed surface of a sheet that says '{said[:40]}'",
        ("untouchable view with no label", f"text '{said[:60]}'"),
    )


def stepper(reader: ScreenReader, target) -> bool:  # noqa: ANN001 - an Element
    """A small control touching a bare number on its row ("- 1 +"): a stepper."""
    b = target.bounds
    if b is None or b.right - b.left > 0.15 * reader.screen.width:
        return False
    for e in reader.visible:
        o = e.bounds
        if o is None or e.node.get("clickable") == "true" or not re.fullmatch(r"\d{1,3}", e.text.strip()):
            continue
        touching = min(abs(o.left - b.right), abs(b.left - o.right)) <= 30
        if touching and o.top < b.bottom and b.top < o.bottom:
            return True
    return False


def _navigation_corner(reader: ScreenReader, target) -> bool:  # noqa: ANN001 - an Element
    """The top-left corner of the title bar: back, close or the drawer in every Android app (an icon-font ← too)."""
    b = target.bounds if target is not None else None
    return b is not None and b.right <= 0.2 * reader.screen.width and b.bottom <= 0.12 * reader.screen.height


def _toggle(ctx: TargetContext) -> Finding | None:
    """A check box or switch is named by its row ("免密支付 [switch]" signs a payment agreement, "Also comment [ ]"
    only sets an option): the rest of the screen says what the button that follows will do, not the tick."""
    target = ctx.target
    if target is None or target.bounds is None:
        return None
    top, bottom = target.bounds.top, target.bounds.bottom
    row: list[str] = []
    node = target.node
    for _ in range(2):
        node = layout_parent(node)
        if node is None:
            break
        for n in node.iter("node"):
            m = re.fullmatch(
                r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]", (n.get("bounds") or "").replace(" ", "")
            )
            if n is target.node or m is None or not top <= (int(m.group(2)) + int(m.group(4))) // 2 <= bottom:
                continue
            row += [t for t in (n.get("text", "").strip(), n.get("content-desc", "").strip()) if t]
        if row:
            break
    named = next((k for t in row if (k := verb_kind(t)) is not None), None) or topic_kind(row)
    if named is None:
        return None
    return Finding(
        named[0],
        "label",
        ctx.describe(),
        f"a switch in the row '{named[1][:40]}'",
        (f"row text '{named[1][:60]}'",),
    )


def _action_bar(reader: ScreenReader, target) -> bool:  # noqa: ANN001 - an Element
    """Where screens put their actions: the right of the title bar (check mark, send, trash) and the bottom bar.
    Its top-left corner is back, close or the drawer in every Android app."""
    b = target.bounds
    if b is None:
        return False
    w, h = reader.screen.width, reader.screen.height
    title_bar = b.bottom <= 0.12 * h and b.left >= 0.2 * w
    bottom_bar = b.top >= 0.85 * h
    return title_bar or bottom_bar


def _collection_item(target) -> bool:  # noqa: ANN001 - an Element
    """One of a row or grid of look-alike items (avatars in a selection strip, chips, thumbnails): tapping one picks
    or opens it. Action buttons stand alone."""
    b, parent = target.bounds, target.node.getparent()
    if b is None or parent is None:
        return False
    w, h = b.right - b.left, b.bottom - b.top
    alike = 0
    for sibling in parent.iterchildren("node"):
        m = re.fullmatch(
            r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]", (sibling.get("bounds") or "").replace(" ", "")
        )
        if m is None or sibling.get("class") != target.class_name:
            continue
        sw, sh = int(m.group(3)) - int(m.group(1)), int(m.group(4)) - int(m.group(2))
        alike += abs(sw - w) <= 0.15 * max(w, 1) and abs(sh - h) <= 0.15 * max(h, 1)
    return alike >= 3


def _any_clickable(reader: ScreenReader) -> bool:
    return any(e.node.get("clickable") == "true" for e in reader.visible)


def _from_ocr(
    ctx: TargetContext, words: list[OcrWord], model: tuple[str, str] | None
) -> tuple[bool, Finding | None]:
    """(whether the pixels settled it, the finding). Nothing legible under the finger and nothing said around it
    settles nothing: the caller goes on reading the tree's structure."""
    described = ctx.describe()
    # An icon's caption sits under it (40-80 px on a 1080-wide frame): that is still the control's name.
    # An icon read as a lone character ("口" for a trash can) is a guess at a shape, not a name.
    words = [w for w in words if w.score >= 0.75 and (len(fold(w.text)) > 1 or fold(w.text).isdigit())]
    near = [w for w in words if _box_contains(w.box, ctx.point, pad=24, below=90)]
    near_text = " ".join(w.text for w in near)
    signals = tuple(f"ocr '{w.text}'" for w in words[:6])
    named = verb_kind(near_text) if near else None
    if near and is_no(near_text):
        return True, None
    if named is not None:
        return True, with_model(
            Finding(named[0], "ocr", described, f"OCR under the finger: '{near_text[:40]}'", signals), model
        )
    # The whole sheet the pixels show: an amount, a renewing price, 免密 or 扣款 in its fine print make what is
    # under the finger a commit unless it is known to be harmless; OCR clears a control only on a page without them.
    potential = potential_of([w.text for w in words])
    if potential is not None and harmless_words(near_text) is None:
        return True, with_model(
            Finding(
                potential.kind,
                "ocr",
                described,
                f"OCR: '{near_text[:30] or 'an unreadable control'}' on a page with {potential.describe()}",
                (*signals, *potential.signals),
            ),
            model,
        )
    topic = topic_kind([w.text for w in words])
    if topic is not None and (not near or is_yes(near_text) or bool(amounts(near_text))):
        return True, with_model(
            Finding(topic[0], "ocr", described, f"OCR around the finger: '{topic[1]}'", signals), model
        )
    if model is not None:
        return True, Finding(model[0], "model", described, model[1], (*signals, model[1]))
    return bool(near), None


def _box_contains(box: tuple[int, int, int, int], p: Point, pad: int = 0, below: int = 0) -> bool:
    """Does the word's box, grown by ``pad`` (and upwards by ``below``, for captions under the point), hold p?"""
    left, top, right, bottom = box
    return left - pad <= p.x <= right + pad and top - pad - below <= p.y <= bottom + pad


__all__ = ["blind_finding", "stepper"]
