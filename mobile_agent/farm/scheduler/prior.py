"""A task run again after an attempt that stopped part-way (a crash, Ctrl-C, a lost phone) must not redo blindly
what that attempt may already have done: a message it sent, an order it placed.

``prior_effects`` reads the earlier attempts' steps: consequential actions recorded as done, and any action whose
outcome is unknown (``intent``: decided, the process stopped before it said how acting went; ``failed``: acting
raised). When there are any, the new attempt runs under ``asking(policy)``: every consequential action asks first
(in a batch nobody answers, so the episode pauses as needs_user for a person to look at the phone).
"""

from __future__ import annotations

from mobile_agent.gate.policy import PolicyAction, SafetyPolicy
from mobile_agent.store import queue as q
from mobile_agent.store.owners import UNSURE
from mobile_agent.store.records import StepInfo
from mobile_agent.store.store import TrajectoryStore


def prior_effects(store: TrajectoryStore, claim: q.Claim) -> list[str]:
    """What earlier attempts of ``claim``'s task may have left on a phone, one sentence each (empty: nothing)."""
    if claim.attempt <= 1:
        return []
    found: list[str] = []
    for episode in store.list_episodes(run_id=claim.run_id, limit=None):
        meta = episode.meta
        if meta.get("queue_task") != claim.task_id or int(meta.get("attempt") or 0) >= claim.attempt:
            continue
        for step in store.steps(episode.id):
            note = _effect(step)
            if note:
                found.append(f"episode {episode.id} step {step.index}: {note}")
    return found


def _effect(step: StepInfo) -> str | None:
    if step.action is None:
        return None
    what = step.action.describe()
    if step.status in UNSURE:
        return f"{what} may have happened ({step.status})"
    kinds = [
        d.get("kind")
        for d in step.guard_decisions
        if d.get("guard") == "safety" and d.get("kind") and d.get("verdict") != "block"
    ]
    if kinds:
        return f"{what} was done ({kinds[0]})"
    return None


def asking(policy: SafetyPolicy) -> SafetyPolicy:
    """The same policy with every ``allow`` turned into ``ask`` (deny stays deny)."""
    ask = PolicyAction.ASK

    def turned(action: PolicyAction) -> PolicyAction:
        return ask if action is PolicyAction.ALLOW else action

    rules = tuple(type(rule)(rule.kind, turned(rule.action), rule.app) for rule in policy.rules)
    return SafetyPolicy(turned(policy.default), rules)


__all__ = ["asking", "prior_effects"]
