"""Loop and oscillation detection: the same action on an unchanged screen, or A-B-A-B between two screens.

Screens are compared by a difference hash (dHash) of the screenshot, so JPEG noise and tiny redraws do not count
as change. The detector first adds a hint to the next prompt ("the last action had no visible effect"); when the
model keeps going, the episode ends as ``loop``. Thresholds live in ``LoopConfig``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mobile_agent.actions import Action, ActionKind
from mobile_agent.gate.guard import Decision, GuardContext, Verdict
from mobile_agent.screen.imagehash import distance


@dataclass(frozen=True)
class LoopConfig:
    hint_after: int = 3  # the same action this many times with no visible effect -> a hint in the next prompt
    end_after: int = 4  # proposing it once more after that (the hint was ignored) ends the episode as loop
    oscillation_hint: int = 2  # A-B cycles between two screens before the hint
    oscillation_end: int = 3  # ... and before the episode ends as loop
    hash_size: int = 16  # dHash side: 16 -> 256 bits
    max_distance: int = 3  # screens within this many differing bits are "unchanged"
    point_tolerance: float = 0.02  # taps within this share of the screen's width/height are "the same"

    def __post_init__(self) -> None:
        if not (1 <= self.hint_after < self.end_after) or not (
            1 <= self.oscillation_hint < self.oscillation_end
        ):
            raise ValueError("loop thresholds need 1 <= hint < end")


NO_EFFECT_HINT = (
    "The last action had no visible effect: the screen did not change after {n} identical attempts. "
    "Do something different (another element, scroll, go back) instead of repeating it."
)
OSCILLATION_HINT = (
    "You are going back and forth between the same two screens ({n} times). "
    "Stop alternating and try a different way to reach the goal."
)


IGNORED = frozenset({ActionKind.WAIT, ActionKind.FINISH, ActionKind.ANSWER, ActionKind.CALL_USER})


@dataclass
class _Entry:
    screen: int
    action: Action


@dataclass
class LoopDetector:
    """Remembers (screen hash, action) of each model step of one episode."""

    config: LoopConfig = field(default_factory=LoopConfig)
    history: list[_Entry] = field(default_factory=list)

    def reset(self) -> None:
        self.history.clear()

    def same_screen(self, a: int, b: int) -> bool:
        return distance(a, b) <= self.config.max_distance

    def same_action(self, a: Action, b: Action, width: int, height: int) -> bool:
        if a.kind is not b.kind or a.text != b.text or a.key != b.key or a.app != b.app:
            return False
        tol_x, tol_y = self.config.point_tolerance * width, self.config.point_tolerance * height
        for p, q in ((a.point, b.point), (a.end, b.end)):
            if (p is None) != (q is None):
                return False
            if p is not None and q is not None and (abs(p.x - q.x) > tol_x or abs(p.y - q.y) > tol_y):
                return False
        return True

    def repeats(self, screen: int, action: Action, width: int, height: int) -> int:
        """How many times in a row, just before now, ``action`` was done on this same screen (and changed nothing)."""
        n = 0
        for entry in reversed(self.history):
            if not (
                self.same_screen(entry.screen, screen)
                and self.same_action(entry.action, action, width, height)
            ):
                break
            n += 1
        return n

    def cycles(self, screen: int, action: Action, width: int, height: int) -> int:
        """Completed A-B round trips just before now, where A is (this screen, this action)."""
        h = self.history
        n = 0
        i = len(h) - 2
        while i >= 0:
            a, b = h[i], h[i + 1]
            if not (self.same_screen(a.screen, screen) and self.same_action(a.action, action, width, height)):
                break
            if self.same_screen(b.screen, screen):
                break  # B must be another screen
            if n and not (
                self.same_screen(b.screen, h[-1].screen)
                and self.same_action(b.action, h[-1].action, width, height)
            ):
                break
            n += 1
            i -= 2
        return n

    def hint(self, screen: int, width: int, height: int) -> str | None:
        """The hint for the prompt about to be built on ``screen``, judged from the steps already taken."""
        if not self.history:
            return None
        cfg = self.config
        last = self.history[-1].action
        if last.kind not in IGNORED:
            repeats = self.repeats(screen, last, width, height)
            if repeats >= cfg.hint_after:
                return NO_EFFECT_HINT.format(n=repeats)
        if len(self.history) >= 2:
            cycles = self.cycles(screen, self.history[-2].action, width, height)
            if cycles >= cfg.oscillation_hint:
                return OSCILLATION_HINT.format(n=cycles)
        return None

    def judge(self, screen: int, action: Action, width: int, height: int) -> str | None:
        """Why the proposed action would continue a loop past its end threshold, or None. Call before acting."""
        if action.kind in IGNORED:
            return None
        cfg = self.config
        repeats = self.repeats(screen, action, width, height) + 1  # counting this one
        if repeats >= cfg.end_after:
            return f"{action.describe()} {repeats} times on an unchanged screen"
        cycles = self.cycles(screen, action, width, height) + 1
        if cycles >= cfg.oscillation_end:
            return f"going back and forth between two screens ({cycles} round trips)"
        return None

    def note(self, screen: int, action: Action) -> None:
        self.history.append(_Entry(screen, action))
        if len(self.history) > 64:
            del self.history[:-64]


class LoopGuard:
    """The detector's end threshold as a guard: BLOCK (kind ``loop``) ends the episode as ``loop``.

    The hint before it is not a guard decision on an action: the loop asks ``detector.hint`` before each prompt.
    """

    name = "loop"

    def __init__(self, detector: LoopDetector | None = None) -> None:
        self.detector = detector or LoopDetector()

    def check(self, ctx: GuardContext) -> Decision:
        if ctx.screen_hash is None:
            return Decision(self.name, Verdict.ALLOW)
        reason = self.detector.judge(ctx.screen_hash, ctx.action, ctx.screen.width, ctx.screen.height)
        if reason is None:
            return Decision(self.name, Verdict.ALLOW)
        return Decision(self.name, Verdict.BLOCK, reason, kind="loop")


__all__ = ["LoopConfig", "LoopDetector", "LoopGuard"]
