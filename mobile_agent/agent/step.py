"""One step's parts: the screen it reads, the draft it fills in, the record and event it leaves behind.

A step reads the phone through a :class:`StepScreen` (frames at the model's working size; the view tree dumped at
most once, in the background while the screenshot is taken), fills a :class:`StepDraft` as it proceeds, and is
written once, as :func:`step_record` builds it. :func:`rebuild_history` gives a resumed episode the model turns the
loop would have kept.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from mobile_agent.actions import Action
from mobile_agent.agent.config import StepEvent
from mobile_agent.device.android import AndroidDevice, Observation
from mobile_agent.errors import AdbServerUnreachable, DeviceError, DeviceLost
from mobile_agent.gate.guard import Decision
from mobile_agent.model.base import HistoryTurn, ModelFamily, PromptOptions
from mobile_agent.model.client import Reply
from mobile_agent.model.images import prepare_image
from mobile_agent.store.records import StepInfo, StepRecord, StepTimings
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)


@dataclass
class StepDraft:
    """Fields of one step, filled in as the step proceeds, then written once."""

    index: int
    started_at: float
    observation: Observation
    source: str = "model"
    reply: Reply | None = None
    thought: str = ""
    action: Action | None = None
    decisions: list[Decision] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    error_kind: str | None = None
    error: str | None = None
    hierarchy: str | None = None
    follow_ups: tuple[Action, ...] = ()  # actions the same reply wrote after this one (agent.sequence)


class StepScreen:
    """The phone's screen as the loop reads it: frames at the model's working size, and each step's view tree."""

    def __init__(self, device: AndroidDevice, family: ModelFamily, registry: Any = None) -> None:
        self.device = device
        self.family = family
        self._registry = registry
        self._activity_scoped: dict[str, bool] = {}
        self._scale: float | None = None
        self._prefetch = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hierarchy")
        self._pending: Future[str] | None = None
        self._fetched = False
        self.dumped: str | None = None  # this step's view tree, once something read it (None until then)

    def scale(self) -> float:
        """Ask the phone for frames at the model's working size: the host then never decodes, resizes or re-encodes
        a full-resolution screenshot (the biggest CPU cost of a step), and the store keeps what the model saw."""
        if self._scale is None:
            device = self.device.screen_size()
            self._scale = min(1.0, self.family.working_size(device).width / device.width)
        return self._scale

    def observe(self) -> Observation:
        return self.device.observe(self.scale())

    def start_step(self, *, prefetch: bool) -> None:
        """Forget the last step's tree. ``prefetch``: this step's tree is wanted before the model is asked (popup
        rules): the one the device read with the settled frame this step reuses, else dumped in the background
        right away, while the screenshot and the foreground app are read."""
        self.dumped = None
        self._fetched = False
        self.device.prefetch_hierarchy = prefetch  # settling reads the next step's tree with its frame
        self.device.needs_activity = self._needs_activity if prefetch and self._registry is not None else None
        pending = self.device.settled_hierarchy(self.scale()) if prefetch else None
        if prefetch and pending is None:
            pending = self._prefetch.submit(self.device.hierarchy)
        self._pending = pending

    def _needs_activity(self, package: str) -> bool:
        """Whether a popup rule that may fire in ``package`` is scoped to activities: then the device reads the
        activity on every step instead of only when the screen's windows change (device/foreground.py)."""
        if package not in self._activity_scoped:
            rules = self._registry.popup_rules(package)
            self._activity_scoped[package] = any(r.activities or r.not_activities for _, r in rules)
        return self._activity_scoped[package]

    def hierarchy(self) -> str | None:
        """The view tree of this step, dumped at most once (popup rules, walls and the safety gate share it)."""
        if not self._fetched:
            self._fetched = True
            pending, self._pending = self._pending, None
            try:
                self.dumped = pending.result() if pending is not None else self.device.hierarchy()
            except (DeviceLost, AdbServerUnreachable):
                raise
            except DeviceError as exc:
                log.warning("no view hierarchy this step: %s", exc.one_line())
                self.dumped = None
        return self.dumped


def step_record(draft: StepDraft) -> StepRecord:
    """The row a finished draft is written as."""
    obs = draft.observation
    reply = draft.reply
    return StepRecord(
        index=draft.index,
        started_at=draft.started_at,
        ended_at=time.time(),
        screen=obs.size,
        foreground_app=obs.package,
        foreground_activity=obs.activity,
        raw_reply=reply.text if reply else None,
        reasoning=reply.reasoning if reply else None,
        thought=draft.thought or None,
        action=draft.action,
        action_source=draft.source,
        guard_decisions=[d.to_dict() for d in draft.decisions],
        timings=StepTimings.from_dict(draft.timings),
        prompt_tokens=reply.prompt_tokens if reply else None,
        completion_tokens=reply.completion_tokens if reply else None,
        model_latency_ms=reply.latency_s * 1000 if reply else None,
        error_kind=draft.error_kind,
        error_text=draft.error,
    )


def step_event(episode_id: str, draft: StepDraft) -> StepEvent:
    return StepEvent(
        episode_id,
        draft.index,
        draft.source,
        draft.thought,
        draft.action,
        draft.error,
        draft.timings,
    )


def rebuild_history(
    steps: Sequence[StepInfo], store: TrajectoryStore, family: ModelFamily, options: PromptOptions
) -> list[HistoryTurn]:
    """The model's earlier turns, as the loop would have kept them (images only for the newest few)."""
    usable = [
        s
        for s in steps
        if str(s.action_source) == "model" and s.action is not None and s.error_kind is None and s.raw_reply
    ]
    usable = usable[-max(1, options.max_history_turns) :]
    with_images = max(0, options.history_images)
    turns = []
    for i, step in enumerate(usable):
        image = None
        path = store.screenshot_path(step)
        if i >= len(usable) - with_images and path is not None and path.is_file():
            image = prepare_image(path.read_bytes(), family).jpeg
        turns.append(HistoryTurn(image=image, reply=step.raw_reply, action=step.action))
    return turns


def device_frame(obs: Observation) -> Image.Image:
    """The step's frame at device pixels (the phone may have sent it scaled), for a guard that reads pixels."""
    image = obs.image()
    return image if image.size == tuple(obs.size) else image.resize(tuple(obs.size))


__all__ = ["StepDraft", "StepScreen", "device_frame", "rebuild_history", "step_event", "step_record"]
