"""Act only on the screen the model saw.

Between the observation and the action the model thinks for seconds, and a phone does not wait: a 免密支付 sheet
slides up, a "delete all?" dialog opens, a call comes in, the page moves on. Right before an action that could
matter, the loop reads the view tree again (one device round trip) and asks :func:`screen_change` whether the
screen changed where it matters:

- a window appeared or went away (a sheet, a dialog, the call screen, the notification shade), or the app in front
  changed;
- the control under the finger is not the one that was there (another label, id or class), or it now sits inside
  a dialog or sheet it was not in;
- the focused field changed, for keys and typing.

What does not matter is ignored: the clock, a badge, an unread count, a toast (a window that takes no touch), a
list item that is not the target. When the screen changed, the action is not performed: the step is recorded as
stale and the model is asked again about a fresh observation.
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree

from mobile_agent.actions import GESTURE_KINDS, POINT_KINDS, Action, ActionKind, Size
from mobile_agent.screen.context import ScreenReader, TargetContext
from mobile_agent.screen.labels import is_keyboard
from mobile_agent.screen.text import fold, shown_tree


@dataclass(frozen=True)
class ScreenChange:
    """Why the live screen is not the one the model saw (one line, recorded with the step)."""

    reason: str


def screen_change(
    seen_xml: str | bytes | None, live_xml: str | bytes | None, action: Action, package: str, screen: Size
) -> ScreenChange | None:
    """How the live screen differs from the seen one where ``action`` would act, or None when it does not."""
    if seen_xml is None:
        return None  # nothing was seen to compare with: the gate already judged a blind step
    seen, live = _reader(seen_xml, screen), _reader(live_xml, screen) if live_xml is not None else None
    if seen is None:
        return None
    if live is None:
        return ScreenChange("the screen could not be read again before acting")
    windows = _windows(seen), _windows(live)
    if windows[0] != windows[1]:
        appeared = sorted(windows[1] - windows[0])
        gone = sorted(windows[0] - windows[1])
        what = f"a window of {appeared[0][0]} appeared" if appeared else f"a window of {gone[0][0]} closed"
        return ScreenChange(what)
    if seen.packages() != live.packages() and live.packages():
        return ScreenChange(f"the app in front is now {sorted(live.packages())[0]}")
    if action.kind in POINT_KINDS or action.kind in GESTURE_KINDS:
        assert action.point is not None
        before, after = seen.at(action.point), live.at(action.point)
        changed = _target_changed(before, after)
        if changed is not None:
            return ScreenChange(changed)
    if action.kind in (ActionKind.TYPE, ActionKind.KEY):
        before_field, after_field = seen.focused_field(), live.focused_field()
        if _identity(before_field) != _identity(after_field):
            return ScreenChange("the focused field changed")
    return None


def _reader(xml: str | bytes, screen: Size) -> ScreenReader | None:
    shown = shown_tree(xml)
    return ScreenReader(shown[0], screen) if shown is not None else None


def _windows(reader: ScreenReader) -> frozenset[tuple[str, str]]:
    """The windows that take touches, by package and box: the dump's top-level nodes (one per window), the status
    bar, keyboards and windows with nothing to touch (a toast) aside."""
    out = set()
    for root in reader.tree.root.iterchildren("node"):
        package = root.get("package") or ""
        if is_keyboard(package) or (root.get("resource-id") or "").endswith("status_bar"):
            continue
        if not any(
            n.get("clickable") == "true" or n.get("long-clickable") == "true" for n in root.iter("node")
        ):
            continue
        out.add((package, root.get("bounds") or ""))
    return frozenset(out)


def _identity(e) -> tuple[str, ...] | None:  # noqa: ANN001 - an Element or None
    if e is None:
        return None
    return (e.class_name, e.resource_id, fold(e.text), fold(e.content_desc))


def _target_changed(before: TargetContext, after: TargetContext) -> str | None:
    b, a = before.target or before.hit, after.target or after.hit
    if (b is None) != (a is None):
        return "something now takes the touch where nothing did" if a is not None else "the target is gone"
    if b is None or a is None:
        return None
    if _identity(b) != _identity(a) or [fold(t) for t in before.labels] != [fold(t) for t in after.labels]:
        label = " ".join(after.labels)[:30] or a.class_name.rsplit(".", 1)[-1]
        return f"the control under the finger is now '{label}'"
    if (before.container is None) != (after.container is None) or (
        before.container is not None
        and after.container is not None
        and _subtree_texts(before.container.node) != _subtree_texts(after.container.node)
    ):
        return "the control now sits in another dialog or sheet"
    return None


def _subtree_texts(node: etree._Element) -> tuple[str, ...]:
    return tuple(
        fold(t)
        for n in node.iter("node")
        for t in (n.get("text") or "", n.get("content-desc") or "")
        if fold(t)
    )


__all__ = ["ScreenChange", "screen_change"]
