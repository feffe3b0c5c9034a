"""The guards a replayed action passes before it reaches the phone: the same ValidityGuard and SafetyGate as `run`.

A recording is not a permission. Every recorded action (the model's, a popup rule's, one a person approved while
the recording ran) is judged again on the live screen under the replay's own policy: a consequential one is
allowed, asked about or refused exactly as `run` would. A person's yes lets that one action through; the next
consequential action asks again. Nobody to ask (``--non-interactive``, no terminal) ends the replay as
``needs_user`` before the action; a refusal, by the policy or by the person, ends it as ``blocked``. The step is
recorded either way, with every decision and its signals.

A replay has no model to continue with, so it leaves no pause behind to resume: run the replay again with
``--allow KIND@APP`` (or answer at the terminal) to let the action through.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mobile_agent.actions import Action, Outcome, Size
from mobile_agent.agent.config import NoUser, UserChannel
from mobile_agent.agent.takeover import approval_from_reply, confirmation_question
from mobile_agent.device.android import Observation
from mobile_agent.gate.gate import SafetyGate
from mobile_agent.gate.guard import Decision, Guard, GuardContext, ValidityGuard, Verdict, run_guards
from mobile_agent.gate.policy import SafetyPolicy
from mobile_agent.store import pauses as pause_store
from mobile_agent.store.store import TrajectoryStore


@dataclass(frozen=True)
class GateResult:
    """The guards' word on one replayed action. ``outcome`` None: perform it; else the replay ends so, before it."""

    decisions: list[Decision] = field(default_factory=list)
    outcome: Outcome | None = None
    detail: str | None = None
    error_kind: str | None = None

    @property
    def go(self) -> bool:
        return self.outcome is None


class ReplayGate:
    """ValidityGuard + SafetyGate under ``policy`` (the library default: ask), and the person who answers."""

    def __init__(
        self,
        store: TrajectoryStore,
        policy: SafetyPolicy | None = None,
        *,
        registry: Any = None,
        user: UserChannel | None = None,
        ocr: Any = None,
        guards: list[Guard] | None = None,
    ) -> None:
        self.store = store
        self.policy = policy or SafetyPolicy()
        self.user = user or NoUser()
        self.guards: list[Guard] = (
            guards if guards is not None else [ValidityGuard(), SafetyGate(self.policy, registry, ocr)]
        )

    def check(
        self,
        *,
        index: int,
        task: str,
        action: Action,
        obs: Observation,
        thought: str,
        hierarchy: Callable[[], str | None],
    ) -> list[Decision]:
        """Every guard's word on ``action`` on the live screen ``obs``. Touches nothing and asks nobody."""
        ctx = GuardContext(
            task,
            action,
            Size(*obs.size),
            obs.package,
            index,
            thought=thought,
            hierarchy_source=hierarchy,
            screenshot_source=lambda: _device_frame(obs),
        )
        return run_guards(self.guards, ctx)

    def resolve(
        self, decisions: list[Decision], *, episode_id: str, index: int, action: Action, obs: Observation
    ) -> GateResult:
        """Act on the decisions: go ahead, end the replay (blocked, invalid), or ask the person and go by the answer."""
        decisions = list(decisions)
        blocked = next((d for d in decisions if d.verdict is Verdict.BLOCK), None)
        if blocked is not None:
            if blocked.guard == "validity":
                return GateResult(
                    decisions,
                    Outcome.error("invalid_action"),
                    f"validity: {blocked.reason}",
                    "invalid_action",
                )
            return GateResult(decisions, Outcome.BLOCKED, f"{blocked.guard}: {blocked.reason}")
        asked = next((d for d in decisions if d.verdict is Verdict.ASK), None)
        if asked is None:
            return GateResult(decisions)
        staged = pause_store.stage_screenshot(self.store, episode_id, index, obs.screenshot)
        question = "Replaying a recorded action. " + confirmation_question(asked, action, staged)
        answer = self.user.ask(question)
        if answer is None:
            detail = (
                f"needs a person: {asked.reason}; nobody could answer, so it was not performed — replay again at "
                f"a terminal, or with --allow {asked.kind or 'KIND'}@{obs.package or 'APP'}"
            )
            return GateResult(decisions, Outcome.NEEDS_USER, detail)
        approved = approval_from_reply(answer) is True
        decisions.append(Decision("human", Verdict.ALLOW if approved else Verdict.BLOCK, answer.strip()))
        if not approved:
            return GateResult(decisions, Outcome.BLOCKED, f"the user declined: {asked.reason}")
        return GateResult(decisions)


def consequential(decisions: list[Decision] | list[dict]) -> bool:
    """Did the safety gate find the action consequential (whatever the policy then said)?"""
    for d in decisions:
        guard, kind = (d.get("guard"), d.get("kind")) if isinstance(d, dict) else (d.guard, d.kind)
        if guard == "safety" and kind:
            return True
    return False


def _device_frame(obs: Observation) -> Any:
    """The frame at device pixels, for a guard that reads pixels (the replay observes at full size already)."""
    image = obs.image()
    return image if image.size == tuple(obs.size) else image.resize(tuple(obs.size))


__all__ = ["GateResult", "ReplayGate", "consequential"]
