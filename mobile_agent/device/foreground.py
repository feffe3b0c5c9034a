"""Which app and activity are in the foreground, read from the phone only when they may have changed.

The read (``dumpsys window``, through adbutils' ``app_current``) is a round-trip of its own. The view tree the step
dumps anyway names every node's package, but no activity, and it holds every window root — the status bar, the
keyboard, a dialog, the app — in no fixed order (the u2 server collects the roots in a HashSet:
openatx/android-uiautomator-server-jar, stub/AccessibilityNodeInfoDumper.java ``getWindowRoots``), so the
foreground app cannot be picked off one root. What the tree does tell is whether the windows changed: their
skeleton (every package shown, and package, class and resource-id of every node that holds others, as a set: text,
positions, leaves and repeats left out) is the same while one activity shows its screens, and differs when another activity, app, keyboard or dialog comes up. The
foreground read is reused while the skeleton stays the same, and taken again when it changes, when there is no tree
to compare, or when the caller needs the activity itself (popup rules scoped to activities).

So ``Observation.activity`` is the activity the phone reported for a screen with the same window skeleton — this
step's, or an earlier one's when nothing but content changed since. Two activities of one app with identical
skeletons, one straight after the other, would be recorded as the first.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

# The attributes every uiautomator dump writes in this order (AccessibilityNodeInfoDumper.dumpNodeRec), and whether
# the node holds others (a self-closed tag is a leaf).
_NODE = re.compile(r'resource-id="([^"]*)" class="([^"]*)" package="([^"]*)"[^>]*?(/?)>')

WindowSkeleton = frozenset[str]


def window_skeleton(xml: str | None) -> WindowSkeleton | None:
    """Every package in the dump, and (package, class, resource-id) of every node that holds others: the layout an
    activity builds its screens in. Leaves are left out, so a button that appears while typing (a send button in
    place of a "+") is not a new window. None when the dump names no node."""
    if not xml:
        return None
    found: set[str] = set()
    for rid, cls, package, leaf in _NODE.findall(xml):
        found.add(package)
        if not leaf:
            found.add(f"{package}\0{cls}\0{rid}")
    return frozenset(found) or None


@dataclass(frozen=True)
class Foreground:
    package: str
    activity: str
    windows: WindowSkeleton | None  # the skeleton of the screen it was read on (None: no tree at hand)


class ForegroundMemory:
    """The last foreground read, and whether it still holds for a screen with a given window skeleton."""

    def __init__(self) -> None:
        self._last: Foreground | None = None

    def still_holds(
        self, windows: WindowSkeleton | None, needs_activity: Callable[[str], bool] | None
    ) -> Foreground | None:
        last = self._last
        if last is None or windows is None or last.windows != windows:
            return None
        if needs_activity is not None and needs_activity(last.package):
            return None
        return last

    def for_tree(
        self,
        tree: Future[str] | None,
        needs_activity: Callable[[str], bool] | None,
        read: Callable[[], tuple[str, str]],
    ) -> tuple[Foreground, bool]:
        """The foreground for the windows of ``tree`` (the dump beside the frame): the last read while it still
        holds, else ``read()`` now; and whether it was read."""
        windows = None
        if tree is not None:
            try:
                windows = window_skeleton(tree.result())
            except Exception:  # noqa: BLE001 - the dump's own failure reaches the loop through the tree
                windows = None
        known = self.still_holds(windows, needs_activity)
        if known is not None:
            return known, False
        package, activity = read()
        return Foreground(package, activity, windows), True

    def remember(self, package: str, activity: str, windows: WindowSkeleton | None) -> None:
        self._last = Foreground(package, activity, windows) if package else None

    def forget(self) -> None:
        self._last = None


__all__ = ["Foreground", "ForegroundMemory", "WindowSkeleton", "window_skeleton"]
