"""Deadlines of an episode and its steps, and the row a step leaves when it runs past its deadline.

Every wait of a step (the screenshot, the hierarchy dump, u2 and adb calls, the model request with its retries)
is bounded by the step's deadline: the episode's, or ``step_timeout_s`` from the step's start when that comes
first. A step that overruns is still written, with ``error_kind`` ``timeout`` and what it had got to (the
screenshot and the model's reply when it had them; nothing was done on the phone), unless acting had begun, in
which case its row is already in the store.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import Any

from mobile_agent.agent.step import StepDraft, step_record
from mobile_agent.device.android import AndroidDevice
from mobile_agent.errors import DeadlineExceeded, MobileAgentError
from mobile_agent.store.records import StepRecord
from mobile_agent.store.store import TrajectoryStore
from mobile_agent.waits.deadlines import Deadline

log = logging.getLogger(__name__)


class StepClock:
    """The episode's deadline, and the current step's: its deadline (handed to the device at each step and to the
    model client by the loop), its start and its draft (what an overrun records)."""

    def __init__(self, device: AndroidDevice, timeout_s: float, step_timeout_s: float) -> None:
        self.device = device
        self.episode = Deadline.after(timeout_s, f"the episode timeout of {timeout_s:.0f} s")
        self.step_timeout_s = step_timeout_s
        self.deadline = self.episode
        self.started = time.time()
        self.draft: StepDraft | None = None
        self.question: Any = None  # the step's request to the model, once sent (asking.Question)

    def next_step(self) -> None:
        limit = Deadline.after(self.step_timeout_s, f"the step limit of {self.step_timeout_s:.0f} s")
        self.deadline = self.episode.sooner(limit)
        self.started, self.draft, self.question = time.time(), None, None
        self.device.set_deadline(self.deadline)

    def record_overrun(
        self, store: TrajectoryStore, episode_id: str, index: int, exc: DeadlineExceeded
    ) -> None:
        """Write the overrunning step's row, unless one is there already (acting had begun). Best effort: the
        episode's end is written after this either way."""
        draft = self.draft
        try:
            if any(step.index == index for step in store.steps(episode_id)):
                return
            text = exc.one_line()
            if draft is not None and draft.index == index:
                record = replace(step_record(draft), action=None, error_kind="timeout", error_text=text)
                screenshot, hierarchy = draft.observation.screenshot, draft.hierarchy
            else:  # the phone never sent this step's screenshot
                record = StepRecord(
                    index=index,
                    started_at=self.started,
                    ended_at=time.time(),
                    error_kind="timeout",
                    error_text=text,
                )
                screenshot = hierarchy = None
            store.record_step(episode_id, record, screenshot=screenshot, hierarchy=hierarchy)
        except MobileAgentError as err:
            log.warning("could not record step %d that ran past its deadline: %s", index, err.one_line())


__all__ = ["StepClock"]
