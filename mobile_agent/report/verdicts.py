"""What verification decided about an episode and its steps, read from the store when verification exists.

Verification (``mobile_agent.verify``) records judgments in the store's ``judgments`` table (read through
``store.judgments(episode_id)`` when the store has that method, else ``mobile_agent.store.judgments``). Without
judgments an episode is unverified and "success" is never claimed: an agent that says it finished is shown as
"finished (unverified)". Records are read duck-typed (attributes or dict keys): ``verdict`` for the episode,
``step_index`` + ``label`` for a step, ``judge``, ``source`` and ``rationale``.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mobile_agent.store.records import EpisodeInfo
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)

COMPLETE = "complete"
UNVERIFIED_FINISH = "finished (unverified)"
VERDICTS = ("complete", "partial", "infeasible", "failed")
STEP_LABELS = ("correct", "exploratory", "ineffective", "wrong")


@dataclass(frozen=True)
class Judgment:
    """One judgment as the report shows it."""

    judge: str
    source: str = ""
    verdict: str | None = None
    step_index: int | None = None
    label: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class EpisodeVerdict:
    """The episode's verdict (None when unverified), its step labels, and every judgment behind them."""

    verdict: str | None = None
    step_labels: dict[int, str] = field(default_factory=dict)
    judgments: list[Judgment] = field(default_factory=list)
    available: bool = False  # does the store know about verification at all?

    @property
    def verified(self) -> bool:
        return self.verdict is not None

    def labels_for(self, index: int) -> list[Judgment]:
        return [j for j in self.judgments if j.step_index == index]


def _reader(store: TrajectoryStore) -> Callable[[str], Any] | None:
    """How to read an episode's judgments: the store's own reader, else the judgments table module's."""
    method = getattr(store, "judgments", None)
    if callable(method):
        return method
    try:
        from mobile_agent.store import judgments as table
    except ImportError:
        return None
    read = getattr(table, "judgments", None)
    if not callable(read):
        return None
    newest = getattr(table, "latest_per_judge", None)

    def read_latest(episode_id: str) -> Any:
        rows = read(store, episode_id)
        return newest(rows) if callable(newest) else rows

    return read_latest


def verification_available(store: TrajectoryStore) -> bool:
    return _reader(store) is not None


def episode_verdict(store: TrajectoryStore, episode_id: str) -> EpisodeVerdict:
    reader = _reader(store)
    if reader is None:
        return EpisodeVerdict()
    try:
        raw = reader(episode_id)
    except Exception as exc:  # noqa: BLE001 - a verification bug must not take the report down
        log.warning("cannot read judgments of episode %s: %s", episode_id, exc)
        return EpisodeVerdict(available=True)
    judgments = [j for j in (_judgment(item) for item in _as_list(raw)) if j is not None]
    labels: dict[int, str] = {}
    for judgment in judgments:  # oldest first: a later label of a step replaces an earlier one
        if judgment.step_index is not None and judgment.label:
            labels[judgment.step_index] = judgment.label
    verdicts = [j for j in judgments if j.step_index is None and j.verdict]
    return EpisodeVerdict(_final_verdict(verdicts), labels, judgments, available=True)


def _final_verdict(verdicts: list[Judgment]) -> str | None:
    """Checks and the judges' majority vote; when both exist, the more conservative one (never over-claims)."""
    if not verdicts:
        return None
    checks = [j.verdict for j in verdicts if j.source == "check"]
    votes = [j.verdict for j in verdicts if j.source != "check"]
    candidates = []
    if checks:
        candidates.append(min(checks, key=_rank))
    if votes:
        tally = Counter(votes)
        top = max(tally.values())
        candidates.append(min((v for v, n in tally.items() if n == top), key=_rank))
    return min(candidates, key=_rank)  # type: ignore[return-value]


def _rank(verdict: str | None) -> int:
    # failed < partial < infeasible < complete: the order verification uses; unknown words rank lowest.
    order = ("failed", "partial", "infeasible", "complete")
    return order.index(verdict) if verdict in order else -1


def _as_list(raw: Any) -> list[Any]:
    if raw is None:
        return []
    if isinstance(raw, Mapping):
        return [raw]
    if isinstance(raw, Iterable) and not isinstance(raw, (str, bytes)):
        return list(raw)
    return [raw]


def _field(item: Any, *names: str) -> Any:
    for name in names:
        value = item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)
        if value is not None:
            return value
    return None


def _judgment(item: Any) -> Judgment | None:
    verdict = _field(item, "verdict")
    label = _field(item, "label", "step_label")
    index = _field(item, "step_index", "index", "step")
    if verdict is None and label is None:
        return None
    return Judgment(
        judge=str(_field(item, "judge", "model") or "verification"),
        source=str(_field(item, "source") or ""),
        verdict=str(getattr(verdict, "value", verdict)) if verdict is not None else None,
        step_index=int(index) if isinstance(index, (int, str)) and str(index).isdigit() else None,
        label=str(getattr(label, "value", label)) if label is not None else None,
        reason=_field(item, "rationale", "reason", "detail"),
    )


def success_status(episode: EpisodeInfo, verdict: EpisodeVerdict) -> str:
    """One word or phrase for an episode: its verdict when verified, else what the agent claimed.

    Only ``complete`` is success. ``finished (unverified)`` means the agent said it was done and nobody checked.
    """
    if verdict.verdict is not None:
        return verdict.verdict
    if episode.outcome is not None and episode.outcome.ended_by_agent:
        return UNVERIFIED_FINISH
    return str(episode.outcome) if episode.outcome is not None else "running"


def is_success(episode: EpisodeInfo, verdict: EpisodeVerdict) -> bool:
    return verdict.verdict == COMPLETE


__all__ = [
    "COMPLETE",
    "STEP_LABELS",
    "UNVERIFIED_FINISH",
    "VERDICTS",
    "EpisodeVerdict",
    "Judgment",
    "episode_verdict",
    "is_success",
    "success_status",
    "verification_available",
]
