"""Which recorded episodes a command works on: a run's, or the ones named (ids or unique prefixes)."""

from __future__ import annotations

from collections.abc import Sequence

from mobile_agent.errors import UserError
from mobile_agent.store.records import EpisodeInfo, StepInfo
from mobile_agent.store.store import TrajectoryStore

SELECT_HINT = "name episodes (mobile-agent episodes lists them) or pass --run RUN"


def select_episodes(
    store: TrajectoryStore, *, run: str | None = None, episodes: Sequence[str] = ()
) -> list[EpisodeInfo]:
    """The episodes of ``run`` (oldest first) or the ``episodes`` named, in the order given, without repeats."""
    if run is not None and episodes:
        raise UserError("pass either --run RUN or episode ids, not both", hint=SELECT_HINT)
    if run is not None:
        info = store.run(run)
        chosen = sorted(store.list_episodes(run_id=info.id, limit=None), key=lambda e: (e.started_at, e.id))
        if not chosen:
            raise UserError(
                f"run {info.id} has no episodes", hint="check the run id with `mobile-agent runs`"
            )
        return chosen
    if not episodes:
        raise UserError("no episodes chosen", hint=SELECT_HINT)
    seen: dict[str, EpisodeInfo] = {}
    for key in episodes:
        info = store.episode(key)
        seen.setdefault(info.id, info)
    return list(seen.values())


def action_was_performed(step: StepInfo) -> bool:
    """A recorded action that really reached the phone: parsed, not blocked, and not left waiting for a person."""
    if step.action is None or step.error_kind is not None:
        return False
    verdicts = [(d.get("guard"), d.get("verdict")) for d in step.guard_decisions]
    if any(verdict == "block" for _, verdict in verdicts):
        return False
    asked = any(verdict == "ask" for _, verdict in verdicts)
    return not asked or ("human", "allow") in verdicts


__all__ = ["action_was_performed", "select_episodes"]
