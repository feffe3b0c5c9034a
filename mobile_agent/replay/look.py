"""One look at the live screen for one recorded step: where its target is now, what the action would be, what the
guards say, and how the screen compares with the recording.

With the step's recorded view tree, the target is found by its identity and the action moved to its live box
(:mod:`mobile_agent.replay.locate`); what it touches is compared (:mod:`mobile_agent.replay.compare`) and decides,
while the screenshot hash and the activity are only noted (a frame taken mid-transition in the recording differs
from the settled live screen by half the hash). Without a tree the action keeps its scaled coordinates and the hash,
the foreground app and the activity decide.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace

from mobile_agent.actions import GESTURE_KINDS, POINT_KINDS, Action, ActionKind, Size
from mobile_agent.device.android import AndroidDevice, Observation
from mobile_agent.errors import DeviceError, DeviceLost
from mobile_agent.gate.guard import Decision
from mobile_agent.replay.compare import compare_touched, notes_between, read_touched, waiting_may_help
from mobile_agent.replay.gate import ReplayGate, consequential
from mobile_agent.replay.identity import identify
from mobile_agent.replay.locate import Located, locate
from mobile_agent.replay.reset import RecordedStart, start_problem
from mobile_agent.replay.results import ReplayOptions, StepComparison
from mobile_agent.replay.screens import (
    moved_to,
    recorded_hierarchy,
    recorded_size,
    scale_action,
    screen_distance,
)
from mobile_agent.screen.viewtree import Bounds
from mobile_agent.store.records import StepInfo
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)

# Recorded ends of an episode: nothing reaches the phone, nothing to judge.
NO_PHONE = (ActionKind.FINISH, ActionKind.ANSWER, ActionKind.CALL_USER)


class LiveTree:
    """The live screen's view tree, dumped at most once per look and shared by the comparison and the guards.
    None when the phone cannot dump it (the comparison then reports a divergence and the gate fails closed)."""

    def __init__(self, device: AndroidDevice) -> None:
        self.device = device
        self.dumped: str | None = None
        self._fetched = False

    def xml(self) -> str | None:
        if not self._fetched:
            self._fetched = True
            try:
                self.dumped = self.device.hierarchy()
            except DeviceLost:
                raise
            except DeviceError as exc:
                log.warning("cannot read the live view tree: %s", exc.one_line())
        return self.dumped


@dataclass(frozen=True)
class Look:
    """What one look found. ``waiting_helps``: the screen may still become the recorded one (the target not there
    yet, the app still starting); otherwise a divergence is what it is."""

    obs: Observation
    live: LiveTree
    action: Action
    decisions: list[Decision]
    compared: StepComparison
    waiting_helps: bool
    screenshot_ms: float


def _box(b: Bounds) -> str:
    return f"[{b.left},{b.top}][{b.right},{b.bottom}]"


@dataclass(frozen=True)
class Looker:
    store: TrajectoryStore
    device: AndroidDevice
    gate: ReplayGate
    options: ReplayOptions
    task: str

    def look(self, step: StepInfo, index: int, start: RecordedStart | None = None) -> Look:
        """The live screen against recorded ``step`` (replayed as step ``index``); ``start``: this is the first
        step after a reset, so the phone must be where the recording started."""
        t0 = time.perf_counter()
        obs = self.device.observe()
        shot_ms = (time.perf_counter() - t0) * 1000
        live = LiveTree(self.device)
        size = recorded_size(self.store, step) or obs.size
        recorded = step.action
        assert recorded is not None  # replayable steps have one
        action = scale_action(recorded, size, obs.size)
        recorded_xml = recorded_hierarchy(self.store, step)
        located = None
        if recorded_xml is not None and recorded.point is not None and _pointed(recorded):
            identity = identify(recorded_xml, recorded.point, size)
            if identity is not None:
                located = locate(identity, live.xml(), action.point, obs.size)  # type: ignore[arg-type]
                if located.found:
                    action = moved_to(action, located.point, obs.size)  # type: ignore[arg-type]
        decisions: list[Decision] = []
        if action.kind not in NO_PHONE:
            decisions = self.gate.check(
                index=index,
                task=self.task,
                action=action,
                obs=obs,
                thought=step.thought or "",
                hierarchy=live.xml,
            )
        # Money moves here (live, or when it was recorded): every amount on the screen must match too.
        money = consequential(decisions) or consequential(step.guard_decisions)
        compared, helps = self._compare(step, obs, live, action, recorded_xml, size, located, money)
        if start is not None and (problem := start_problem(start, obs.package, obs.activity)):
            compared = replace(compared, differences=(problem, *compared.differences))
            helps = True
        return Look(obs, live, action, decisions, compared, helps or not compared.app_matches, shot_ms)

    def _compare(
        self,
        step: StepInfo,
        obs: Observation,
        live: LiveTree,
        action: Action,
        recorded_xml: str | None,
        size: Size,
        located: Located | None,
        money: bool,
    ) -> tuple[StepComparison, bool]:
        shot = self.store.screenshot_path(step)
        distance = screen_distance(shot, obs.image()) if shot is not None and shot.is_file() else None
        base = StepComparison(
            index=step.index,
            action=action,
            recorded_app=step.foreground_app or "",
            live_app=obs.package or None,
            distance=distance,
            threshold=self.options.hash_threshold,
            recorded_activity=step.foreground_activity or "",
            live_activity=obs.activity or None,
        )
        if recorded_xml is None:
            compared_by = (
                f"screen hash and activity only: the recording kept no view tree for step {step.index}, "
                "so the action keeps its scaled coordinates and the touched element, names and amounts were not "
                "compared"
            )
            compared = replace(base, compared_by=compared_by)
            return compared, compared.diverged
        recorded_action = step.action
        pointed = _pointed(recorded_action)  # type: ignore[arg-type]
        recorded = read_touched(recorded_xml, recorded_action.point if pointed else None, size)  # type: ignore[union-attr]
        now = read_touched(live.xml(), action.point if pointed else None, obs.size)
        differences: list[str] = []
        notes = notes_between(recorded, now)
        helps = waiting_may_help(recorded, now)
        where = ""
        if located is not None and not located.found:
            if action.kind in GESTURE_KINDS and not money:  # a scroll need not start on the same row
                notes.insert(0, f"{located.problem}; the gesture keeps its scaled place")
                differences += compare_touched(recorded, now, money_moves=money)
            else:
                differences.append(located.problem or "the target is not on the screen")
                helps = helps or located.waiting_helps
        else:
            differences += compare_touched(recorded, now, money_moves=money)
            if located is not None and located.moved and located.bounds is not None:
                where = f"target found by element, moved to {_box(located.bounds)}"
            elif located is not None:
                where = "target found by element in its place"
        amounts = (
            "every amount on screen and the page's title" if money else "amounts on the target and its dialog"
        )
        compared_by = "view tree: " + (
            f"target {recorded.element or '(none)'} by class, resource-id, name and place in the tree; its dialog, "
            f"{amounts}"
            if pointed
            else ("every amount on screen, " if money else "") + "the focused field"
        )
        compared = replace(
            base,
            differences=tuple(differences),
            notes=tuple(notes),
            located=where,
            compared_by=compared_by,
            by_tree=True,
        )
        return compared, helps


def _pointed(action: Action) -> bool:
    return action.kind in POINT_KINDS or action.kind in GESTURE_KINDS


__all__ = ["NO_PHONE", "LiveTree", "Look", "Looker"]
