"""Actions a model wrote after the first one in the same reply, performed one per step.

Each follow-up is a step of its own: the phone is observed again and the action goes through the popup rules,
the walls, the critic and the guards like any model action, and is recorded on its own (without a reply: the
reply is recorded, and kept in the model's history, with the step that asked for it). The sequence only goes on
while each action is performed in the step right after the one before it: when one is blocked, refused, handed
to the user or interrupted by a popup rule, the rest was planned for a screen that is not there; it is dropped
and the model is asked again.
"""

from __future__ import annotations

from mobile_agent.agent.step import StepDraft


class FollowUps:
    """Per episode. ``fill`` is offered every step's draft before the model would be asked."""

    def __init__(self) -> None:
        self._last: StepDraft | None = None
        self._origin = 0  # the step whose reply wrote the sequence
        self._total = 0

    def ready(self, index: int) -> bool:
        """Whether step ``index`` would be given a follow-up (then the model is not asked)."""
        prev = self._last
        if prev is None or not prev.follow_ups or prev.error is not None or "act" not in prev.timings:
            return False
        return index == prev.index + 1 and prev.action is not None

    def fill(self, draft: StepDraft) -> bool:
        """Give ``draft`` the next action of the last step's reply, when that step performed its own."""
        ready, prev, self._last = self.ready(draft.index), self._last, draft
        if not ready or prev is None:
            return False
        if prev.reply is not None:
            self._origin, self._total = prev.index, len(prev.follow_ups) + 1
        draft.action, draft.follow_ups = prev.follow_ups[0], prev.follow_ups[1:]
        position = self._total - len(prev.follow_ups) + 1
        draft.thought = f"action {position} of {self._total} in the reply of step {self._origin}"
        return True


__all__ = ["FollowUps"]
