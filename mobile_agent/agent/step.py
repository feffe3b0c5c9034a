"""One step's parts: the screen it reads, the draft it fills in, the record and event it leaves behind.

A step reads the phone through a :class:`StepScreen` (frames at the model's working size; the view tree dumped for
each frame in the background, while the model is asked), fills a :class:`StepDraft` as it proceeds, and is
written once, as :func:`step_record` builds it. :func:`rebuild_history` gives a resumed episode the model turns the
loop would have kept.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from mobile_agent.actions import Action
from mobile_agent.agent.config import StepEvent
from mobile_agent.device.android import AndroidDevice, Capture, Observation
from mobile_agent.errors import AdbServerUnreachable, DeadlineExceeded, DeviceError, DeviceLost
from mobile_agent.gate.guard import Decision
from mobile_agent.model.base import HistoryTurn, ModelFamily, PromptOptions
from mobile_agent.model.client import ModelClient, Reply
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
    """The phone's screen as the loop reads it: frames at the model's working size, and each frame's view tree."""

    def __init__(self, device: AndroidDevice, family: ModelFamily, registry: Any = None) -> None:
        self.device = device
        self.family = family
        self._scale: float | None = None
        self._capture: Capture | None = None
        self._fetched = False
        self._dump_s: float | None = None  # how long a view-tree read after a frame took, last time
        self.dumped: str | None = None  # this step's view tree, once something read it (None until then)

    def scale(self) -> float:
        """Ask the phone for frames at the model's working size: the host then never decodes, resizes or re-encodes
        a full-resolution screenshot (the biggest CPU cost of a step), and the store keeps what the model saw."""
        if self._scale is None:
            device = self.device.screen_size()
            self._scale = min(1.0, self.family.working_size(device).width / device.width)
        return self._scale

    def capture(self) -> Capture:
        """This step's frame, at once; its view tree and foreground app are read in the background meanwhile."""
        self.dumped, self._fetched = None, False
        self._capture = self.device.capture(self.scale())
        return self._capture

    def model_answered(self, seconds: float) -> None:
        """Where the next frame's view tree is read, now that the model took ``seconds`` to answer: after the frame,
        while the model thinks, when the model takes longer than that read (the action, the idle wait and the
        frame are then one request); else beside the frame's idle wait, the action in a request of its own."""
        read = self._capture.read if self._capture is not None else None
        if read is not None and read.done() and read.exception() is None and not read.result().beside:
            self._dump_s = read.result().seconds
        self.device.prefetch_hierarchy = self._dump_s is not None and seconds < self._dump_s

    def observe(self) -> Observation:
        """A frame with its foreground app (for a step that does not overlap anything)."""
        return self.capture().observation()

    def hierarchy(self) -> str | None:
        """The view tree dumped for this step's frame, waited for at most once (popup rules, walls and the safety
        gate share it); None when the dump failed."""
        if not self._fetched:
            self._fetched = True
            capture = self._capture
            try:
                self.dumped = capture.screen().hierarchy if capture is not None else self.device.hierarchy()
            except (DeviceLost, AdbServerUnreachable, DeadlineExceeded):
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


def pause_context(family: str, client: ModelClient, config: Any, episode_id: str) -> dict[str, Any]:
    """What a resumed episode is run with (the pause keeps it): the family, the model and its endpoints, the
    settings, and the replies it did not use that the model server has not been told of yet."""
    context = {
        "family": family,
        "model": client.model,
        "base_urls": list(client.endpoints),
        "config": config.snapshot(),
    }
    unused = client.take_unused(episode_id)
    return {**context, "unused_replies": unused} if unused else context


def device_frame(obs: Observation) -> Image.Image:
    """The step's frame at device pixels (the phone may have sent it scaled), for a guard that reads pixels."""
    image = obs.image()
    return image if image.size == tuple(obs.size) else image.resize(tuple(obs.size))


__all__ = [
    "StepDraft",
    "StepScreen",
    "device_frame",
    "pause_context",
    "rebuild_history",
    "step_event",
    "step_record",
]
