"""A task run again after an attempt that stopped part-way (a crash, Ctrl-C, a lost phone) must not redo blindly
what that attempt may already have done: a message it sent, an order it placed.

``prior_steps`` reads the earlier attempts' steps: consequential actions recorded as done, and any action whose
outcome is unknown (``intent``: decided, the process stopped before it said how acting went; ``failed``: acting
raised). Only what was consequential matters: an unknown harmless tap changes nothing. The kinds of those
consequential actions (a send, a payment) ask before they happen again (``asking_for``: only those kinds, every
other action as the policy says; in a batch nobody answers, so the episode pauses as needs_user for a person to
look at the phone) — unless the phone's state tells: the runner resolves it with the task's check first
(mobile_agent.farm.scheduler.runner), so a send that went through ends the task and one that did not is just
done again.
"""

from __future__ import annotations

from dataclasses import dataclass

from mobile_agent.gate.policy import PolicyAction, PolicyRule, SafetyPolicy
from mobile_agent.store import queue as q
from mobile_agent.store.owners import UNSURE
from mobile_agent.store.records import StepInfo
from mobile_agent.store.store import TrajectoryStore


@dataclass(frozen=True)
class PriorStep:
    """A step of an earlier attempt that may have left something on a phone."""

    episode_id: str
    index: int
    what: str  # the action, described
    status: str | None  # intent / failed: its effect is unknown; done (or None, older stores): it was done
    kind: str | None  # the consequence kind the gate found (send, pay, ...); None: harmless

    @property
    def unsure(self) -> bool:
        return self.status in UNSURE

    def describe(self) -> str:
        how = f"may have happened ({self.status})" if self.unsure else "was done"
        kind = f" ({self.kind})" if self.kind else " (harmless)"
        return f"episode {self.episode_id} step {self.index}: {self.what} {how}{kind}"


def prior_steps(store: TrajectoryStore, claim: q.Claim) -> list[PriorStep]:
    """The steps of earlier attempts of ``claim``'s task whose effect is unknown or consequential."""
    if claim.attempt <= 1:
        return []
    found: list[PriorStep] = []
    for episode in store.list_episodes(run_id=claim.run_id, limit=None):
        meta = episode.meta
        if meta.get("queue_task") != claim.task_id or int(meta.get("attempt") or 0) >= claim.attempt:
            continue
        for step in store.steps(episode.id):
            effect = _effect(episode.id, step)
            if effect is not None:
                found.append(effect)
    return found


def prior_effects(store: TrajectoryStore, claim: q.Claim) -> list[str]:
    """What earlier attempts of ``claim``'s task may have left on a phone, one sentence each (empty: nothing)."""
    return [step.describe() for step in prior_steps(store, claim)]


def consequential_kinds(steps: list[PriorStep]) -> list[str]:
    """The consequence kinds to ask about again: those of consequential steps, done or of unknown effect."""
    return sorted({step.kind for step in steps if step.kind})


def _effect(episode_id: str, step: StepInfo) -> PriorStep | None:
    if step.action is None:
        return None
    kinds = [
        d.get("kind")
        for d in step.guard_decisions
        if d.get("guard") == "safety" and d.get("kind") and d.get("verdict") != "block"
    ]
    if not kinds and step.status not in UNSURE:
        return None
    return PriorStep(episode_id, step.index, step.action.describe(), step.status, kinds[0] if kinds else None)


def asking_for(policy: SafetyPolicy, kinds: list[str]) -> SafetyPolicy:
    """The same policy, with ``allow`` turned into ``ask`` for these consequence kinds only."""
    if not kinds:
        return policy
    ask, allow = PolicyAction.ASK, PolicyAction.ALLOW
    rules: list[PolicyRule] = []
    for rule in policy.rules:
        if rule.action is allow and rule.kind in kinds:
            rules.append(PolicyRule(rule.kind, ask, rule.app))
        elif rule.action is allow and rule.kind == "*":
            rules += [rule, *(PolicyRule(kind, ask, rule.app) for kind in kinds)]
        else:
            rules.append(rule)
    if policy.default is allow:
        rules += [PolicyRule(kind, ask) for kind in kinds]
    return SafetyPolicy(policy.default, tuple(rules))


def asking(policy: SafetyPolicy) -> SafetyPolicy:
    """The same policy with every ``allow`` turned into ``ask`` (deny stays deny)."""
    ask = PolicyAction.ASK

    def turned(action: PolicyAction) -> PolicyAction:
        return ask if action is PolicyAction.ALLOW else action

    rules = tuple(type(rule)(rule.kind, turned(rule.action), rule.app) for rule in policy.rules)
    return SafetyPolicy(turned(policy.default), rules)


__all__ = ["PriorStep", "asking", "asking_for", "consequential_kinds", "prior_effects", "prior_steps"]
