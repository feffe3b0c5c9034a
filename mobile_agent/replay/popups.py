"""A popup the recording did not have (a splash ad, an update prompt, a permission dialog) met while a replayed step
waits for its target: the app's popup rules dismiss it, as in `run`, and the replay goes on.

A rule's action passes the same guards as any replayed action, and it is only done when none of them objects (a
rule never taps what needs a person's yes; on any objection the step goes on waiting, and stops when its time is
up). It is recorded as a step of the replay, whose source is ``rule``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mobile_agent.actions import Action
from mobile_agent.device.android import Observation
from mobile_agent.gate.guard import Decision, Verdict
from mobile_agent.replay.gate import ReplayGate


@dataclass(frozen=True)
class PopupAction:
    rule: str  # the rule's id
    action: Action
    decisions: list[Decision]


def popup_action(
    registry: Any, gate: ReplayGate, obs: Observation, xml: str | None, *, index: int, task: str
) -> PopupAction | None:
    """The action of the first popup rule that fires on the live screen and that no guard objects to."""
    if registry is None or not obs.package or not xml:
        return None
    match = registry.match_popup(obs.package, xml, activity=obs.activity)
    if match is None or match.action is None:
        return None
    rule = str(getattr(match.rule, "id", match.rule))
    decisions = gate.check(
        index=index,
        task=task,
        action=match.action,
        obs=obs,
        thought=f"popup rule: {rule}",
        hierarchy=lambda: xml,
    )
    if any(d.verdict in (Verdict.BLOCK, Verdict.ASK) for d in decisions):
        return None
    return PopupAction(rule, match.action, decisions)


__all__ = ["PopupAction", "popup_action"]
