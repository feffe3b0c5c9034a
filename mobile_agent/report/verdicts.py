"""What verification decided about an episode and its steps, read from the store when verification exists.

Verification (``mobile_agent.verify``) adds a ``judgments`` reader to the store. Until it does, every episode is
unverified and "success" is never claimed: an agent that says it finished is shown as "finished (unverified)".
The reader is duck-typed so this module works with whatever record shape verification settles on: each judgment
has a ``verdict`` (episode level) or a ``step_index`` + ``label`` (step level), as attributes or dict keys.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mobile_agent.store import EpisodeInfo, TrajectoryStore

log = logging.getLogger(__name__)

COMPLETE = "complete"
UNVERIFIED_FINISH = "finished (unverified)"
VERDICTS = ("complete", "partial", "infeasible", "failed")
STEP_LABELS = ("correct", "exploratory", "ineffective", "wrong")


@dataclass(frozen=True)
class Judgment:
    """One judgment as the report shows it."""

    judge: str
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


def verification_available(store: TrajectoryStore) -> bool:
    return callable(getattr(store, "judgments", None))


def episode_verdict(store: TrajectoryStore, episode_id: str) -> EpisodeVerdict:
    reader = getattr(store, "judgments", None)
    if not callable(reader):
        return EpisodeVerdict()
    try:
        raw = reader(episode_id)
    except Exception as exc:  # noqa: BLE001 - a verification bug must not take the report down
        log.warning("cannot read judgments of episode %s: %s", episode_id, exc)
        return EpisodeVerdict(available=True)
    judgments = [j for j in (_judgment(item) for item in _as_list(raw)) if j is not None]
    verdict = None
    labels: dict[int, str] = {}
    for judgment in judgments:  # later judgments override earlier ones
        if judgment.step_index is None and judgment.verdict:
            verdict = judgment.verdict
        elif judgment.step_index is not None and judgment.label:
            labels[judgment.step_index] = judgment.label
    return EpisodeVerdict(verdict, labels, judgments, available=True)


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
        judge=str(_field(item, "judge", "source", "checker", "model") or "verification"),
        verdict=str(getattr(verdict, "value", verdict)) if verdict is not None else None,
        step_index=int(index) if isinstance(index, (int, str)) and str(index).isdigit() else None,
        label=str(getattr(label, "value", label)) if label is not None else None,
        reason=_field(item, "reason", "detail", "explanation"),
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
