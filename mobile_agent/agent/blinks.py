"""Phones that blink: a phone that leaves the adb bus in the middle of a step (a USB cable jostled, a Wi-Fi phone's
network gone for a few seconds) is waited for, within ``AgentConfig.reconnect_wait_s`` and the episode's time
left, before the episode ends ``error:device_lost``.

When it is back the step starts over from a fresh frame: at the same index when the step had written nothing, at
the next one when it had (its row says what it did: an action whose acting was cut off is ``failed``, it may have
partly happened, and the fresh frame shows the model what the phone looks like now). A phone that keeps leaving
is given up after ``MAX_RETURNS`` returns in one episode.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from mobile_agent.agent.config import AgentConfig, StopFlag
from mobile_agent.agent.overrun import StepClock
from mobile_agent.device.android import AndroidDevice
from mobile_agent.errors import DeviceLost
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)

MAX_RETURNS = 10


class PhoneBlinks:
    """One episode's steps through the phone's absences."""

    def __init__(
        self,
        device: AndroidDevice,
        store: TrajectoryStore,
        episode_id: str,
        config: AgentConfig,
        stop: StopFlag,
    ) -> None:
        self.device, self.store, self.episode_id = device, store, episode_id
        self.wait_s = config.reconnect_wait_s
        self.stop = stop
        self.returns = 0
        self.clock: StepClock | None = None

    def through(self, step: Callable[[], None], clock: StepClock) -> bool:
        """Run ``step``: True when it ran; False when the phone left the bus during it and came back (the caller
        starts over from a fresh frame, at :meth:`index_after`). DeviceLost when it stayed away past the bound."""
        self.clock = clock
        try:
            step()
            return True
        except DeviceLost as exc:
            lost = exc
        serial = self.device.serial
        bound = min(self.wait_s, clock.episode.remaining())
        if bound <= 0 or self.returns >= MAX_RETURNS:
            raise lost
        log.warning("phone %s left the adb bus; waiting up to %.0f s for it: %s", serial, bound, lost.message)
        started = time.monotonic()
        if not self.device.await_return(bound, poll=self.stop.check):
            raise DeviceLost(
                f"phone {serial} left the adb bus and was not back within {bound:.0f} s ({lost.message})",
                f"check the cable or the network (a network phone: `mobile-agent adb connect {serial}`); raise "
                "--reconnect-wait for a phone that takes longer to come back",
            ) from None
        self.returns += 1
        log.warning(
            "phone %s is back after %.1f s; the step starts again", serial, time.monotonic() - started
        )
        return False

    def index_after(self, index: int) -> int:
        """The step's index again when the step left no row (its request to the model, if it was sent, is cut
        and said to be unused, as when a popup rule acts instead), else the next one."""
        if any(step.index == index for step in self.store.steps(self.episode_id)):
            return index + 1
        if self.clock is not None and self.clock.question is not None:
            self.clock.question.discard()
        return index


__all__ = ["MAX_RETURNS", "PhoneBlinks"]
