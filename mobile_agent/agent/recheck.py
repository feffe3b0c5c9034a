"""Act only on the screen the model saw: right before acting, read the screen again when it matters and compare.

The gate marks a decision ``recheck`` when the action could matter on its screen (a finding, or a screen with
potential); any action also waits too long for it when the model took longer than ``recheck_after_s`` since the
observation. Then the view tree is read again (one device request) and :func:`mobile_agent.gate.freshness.
screen_change` says whether the screen changed where the action lands. A changed screen makes the step a stale one:
recorded with the frame and tree that were judged and why they are stale, nothing performed.
"""

from __future__ import annotations

import time

from mobile_agent.actions import ActionKind, Size
from mobile_agent.agent.step import StepDraft
from mobile_agent.device.android import AndroidDevice
from mobile_agent.errors import MobileAgentError
from mobile_agent.gate.freshness import screen_change
from mobile_agent.gate.guard import Decision, Verdict


def stale_step(
    device: AndroidDevice, seen: str | None, draft: StepDraft, recheck_after_s: float
) -> str | None:
    """When the phone no longer shows the judged screen where ``draft.action`` lands: the draft made a stale step
    (its error, a ``freshness`` decision, the live tree) and the correction for the model's next prompt. None:
    act."""
    action = draft.action
    if action is None or seen is None or action.kind is ActionKind.LAUNCH:
        return None
    waited = time.time() - draft.started_at
    if not any(d.recheck for d in draft.decisions) and waited < recheck_after_s:
        return None
    obs = draft.observation
    try:
        live: str | None = device.hierarchy()
    except MobileAgentError:  # a screen that cannot be read again is not known to be the one judged
        live = None
    change = screen_change(seen, live, action, obs.package, Size(*obs.size))
    if change is None:
        return None
    draft.error_kind = "stale_screen"
    draft.error = f"not performed: the screen changed before acting ({change.reason})"
    draft.decisions.append(Decision("freshness", Verdict.BLOCK, change.reason, kind="stale_screen"))
    draft.hierarchy = seen  # the tree of the frame the step shows; the next step records the new screen
    return f"The screen changed before your action could be performed ({change.reason}). Look at it again."


__all__ = ["stale_step"]
