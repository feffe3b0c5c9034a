"""The records of a replay: the options it runs with, each replayed step as compared with the recording, the end."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from mobile_agent.actions import Action, Outcome, Size
from mobile_agent.errors import UserError
from mobile_agent.store.records import EpisodeInfo

# Hamming distance (of 64) above which two screenshots count as different. Re-rendering the same screen at another
# resolution or JPEG quality moves a few bits; a popup, another page or another app moves far more.
DEFAULT_HASH_THRESHOLD = 12
# How long a step waits for its target (or for the screen the recording had) before the replay gives up on it.
DEFAULT_WAIT_S = 10.0


class DivergencePolicy(str, Enum):
    STOP = "stop"  # end the replay at the first divergent step, before acting on it (the default)
    WARN = "warn"  # record the divergence, log a warning and act anyway
    CONTINUE = "continue"  # record the divergence and act anyway, quietly


class ResetMode(str, Enum):
    """How the phone is brought to the recording's start before step 0 (replay/reset.py)."""

    NONE = "none"  # as it is
    HOME = "home"  # the home screen (and the recorded app opened, when the recording started in one)
    FORCE_STOP = "force-stop"  # the recording's apps stopped first, so they start afresh
    CLEAR_DATA = "clear-data"  # the recording's apps' data cleared first (their accounts and settings too)


@dataclass(frozen=True)
class ReplayOptions:
    speed: float = 0.0  # >0: keep the recording's pace, sped up X times; 0: as fast as the screen settles
    until: int | None = None  # last recorded step index to replay (inclusive)
    on_divergence: DivergencePolicy = DivergencePolicy.STOP
    dry_run: bool = False  # only show the scaled actions; never act, never record
    hash_threshold: int = DEFAULT_HASH_THRESHOLD
    reset: ResetMode = ResetMode.NONE
    wait_s: float = DEFAULT_WAIT_S  # how long a step waits for its target to be there

    def __post_init__(self) -> None:
        if self.speed < 0:
            raise UserError(f"--speed must be 0 or more, got {self.speed}", hint="2 replays twice as fast")
        try:
            object.__setattr__(self, "on_divergence", DivergencePolicy(self.on_divergence))
        except ValueError:
            raise UserError(
                f"--on-divergence {self.on_divergence!r} is not a policy", hint="use stop, warn or continue"
            ) from None
        try:
            object.__setattr__(self, "reset", ResetMode(self.reset))
        except ValueError:
            raise UserError(
                f"--reset {self.reset!r} is not a way to reset the phone",
                hint="use none, home, force-stop or clear-data",
            ) from None
        if self.until is not None and self.until < 0:
            raise UserError(f"--until must be a step index >= 0, got {self.until}", hint="e.g. --until 3")
        if not 0 <= self.wait_s <= 600:
            raise UserError(f"--wait must be 0 to 600 seconds, got {self.wait_s}", hint="e.g. --wait 10")


@dataclass(frozen=True)
class StepComparison:
    """One replayed step: the recorded action as it was performed on the target, and how the live screen compared.

    ``by_tree``: the recording kept the step's view tree, so the target, its dialog and the amounts decide and the
    screenshot hash and activity are only noted; without a tree they decide. ``popup``: the id of the popup rule
    whose action this is (a popup the recording did not have, dismissed while the step waited for its target).
    """

    index: int  # the step's index in the source episode
    action: Action | None
    recorded_app: str
    live_app: str | None = None
    distance: int | None = None  # hash distance between recorded and live screenshots (0..64)
    threshold: int = DEFAULT_HASH_THRESHOLD
    performed: bool = False
    error: str | None = None
    recorded_activity: str = ""
    live_activity: str | None = None
    differences: tuple[str, ...] = ()  # how what the action touches differs: these stop the replay
    compared_by: str = ""  # what the target was compared by (the view trees, or only hash and activity: why)
    notes: tuple[str, ...] = ()  # what differs elsewhere (a row's preview, other texts): shown, never a stop
    located: str = ""  # how the target was found on the live screen ("moved from ... to ...")
    by_tree: bool = False
    popup: str | None = None
    skipped: bool = False  # a recorded popup dismissal whose popup did not show: nothing to do

    @property
    def app_matches(self) -> bool:
        return self.live_app is None or not self.recorded_app or self.live_app == self.recorded_app

    @property
    def activity_matches(self) -> bool:
        if not self.live_activity or not self.recorded_activity or not self.app_matches:
            return True  # unknown on one side, or already a different app
        return self.live_activity == self.recorded_activity

    @property
    def screen_matches(self) -> bool:
        return self.distance is None or self.distance <= self.threshold

    @property
    def target_matches(self) -> bool:
        return not self.differences

    @property
    def diverged(self) -> bool:
        if self.popup is not None or self.skipped:
            return False
        looks = self.by_tree or (self.screen_matches and self.activity_matches)
        return not (self.app_matches and looks and self.target_matches)

    def describe(self) -> str:
        if self.popup is not None:
            return f"popup rule {self.popup}: a popup the recording did not have"
        parts = list(self.differences)
        if self.located:
            parts.append(self.located)
        if self.distance is not None:
            verdict = "matches" if self.screen_matches else "differs"
            parts.append(
                f"screen {verdict} ({self.distance}/64)"
                + (", noted: the view tree decides" if self.by_tree and not self.screen_matches else "")
            )
        if self.live_app is not None:
            parts.append(
                f"app {self.live_app}"
                if self.app_matches
                else f"app {self.live_app} but recorded {self.recorded_app or '(unknown)'}"
            )
        if not self.activity_matches:
            parts.append(
                f"activity {self.live_activity} but recorded {self.recorded_activity}"
                + (" (noted)" if self.by_tree else "")
            )
        parts += [f"noted: {n}" for n in self.notes]
        if self.error:
            parts.append(self.error)
        return ", ".join(parts) if parts else "not compared (dry run)"


@dataclass(frozen=True)
class ReplayResult:
    source: EpisodeInfo
    episode_id: str | None  # None for a dry run
    outcome: Outcome | None
    steps: list[StepComparison] = field(default_factory=list)
    target_screen: Size | None = None
    detail: str | None = None

    @property
    def divergences(self) -> list[StepComparison]:
        return [s for s in self.steps if s.diverged]


__all__ = [
    "DEFAULT_HASH_THRESHOLD",
    "DEFAULT_WAIT_S",
    "DivergencePolicy",
    "ReplayOptions",
    "ReplayResult",
    "ResetMode",
    "StepComparison",
]
