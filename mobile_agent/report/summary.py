"""The numbers of a run report, gathered one episode at a time so that a run of thousands of episodes is never
held in memory: the episode list, results per app and per outcome, verdict counts, step times, the charts.

Only an episode verified *complete* is a success; partial is not. A success rate is taken over the verified
episodes, and is None ("n/a") for an app or a run where nothing was verified, never 0 %.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from mobile_agent.report.charts import BarRow, histogram, stacked_bars
from mobile_agent.report.verdicts import COMPLETE, UNVERIFIED_FINISH, VERDICTS

RESULTS = (COMPLETE, "partial", "infeasible", "failed", UNVERIFIED_FINISH, "other")
NOT_VERIFIED = "not verified"


@dataclass(frozen=True)
class EpisodeEntry:
    """One row of the index's list of episodes."""

    id: str
    task: str
    app: str
    device: str
    status: (
        str  # the verdict when verified, else what the agent claimed (finished (unverified), an outcome...)
    )
    verdict: str | None
    outcome: str
    steps: int
    duration: str
    started_at: datetime | None
    href: str  # where its section is, from the index page

    @property
    def result(self) -> str:
        return self.status if self.status in RESULTS else "other"


@dataclass(frozen=True)
class ResultRow:
    """Episodes of one app (or the whole run) by result, with the success rate over the verified ones."""

    name: str
    episodes: int
    verified: int
    counts: dict[str, int]

    @property
    def complete(self) -> int:
        return self.counts.get(COMPLETE, 0)

    @property
    def rate(self) -> float | None:
        return self.complete / self.verified if self.verified else None


@dataclass
class RunSummary:
    entries: list[EpisodeEntry] = field(default_factory=list)
    step_times: list[float] = field(default_factory=list)

    def add(self, entry: EpisodeEntry, step_times: list[float]) -> None:
        self.entries.append(entry)
        self.step_times.extend(step_times)

    @property
    def total(self) -> ResultRow:
        return _row("all", self.entries)

    @property
    def by_app(self) -> list[ResultRow]:
        apps: dict[str, list[EpisodeEntry]] = {}
        for entry in self.entries:
            apps.setdefault(entry.app, []).append(entry)
        return [_row(app, entries) for app, entries in sorted(apps.items())]

    @property
    def by_outcome(self) -> list[tuple[str, int]]:
        return Counter(entry.outcome for entry in self.entries).most_common()

    @property
    def verdicts(self) -> list[tuple[str, int]]:
        """Each verdict with its count (zero counts shown: "0 failed" is news), then the episodes not verified."""
        counts = Counter(entry.verdict or NOT_VERIFIED for entry in self.entries)
        return [(name, counts[name]) for name in (*VERDICTS, NOT_VERIFIED)]

    @property
    def verified(self) -> int:
        return sum(1 for entry in self.entries if entry.verdict is not None)

    @property
    def unverified_finishes(self) -> int:
        return sum(1 for entry in self.entries if entry.status == UNVERIFIED_FINISH)

    def charts(self) -> list[str]:
        apps = [
            BarRow(row.name, {name: row.counts[name] for name in RESULTS if row.counts.get(name)})
            for row in self.by_app
        ]
        outcomes = [BarRow(name, {name: count}) for name, count in self.by_outcome]
        drawn = (
            stacked_bars(apps, title="Episodes by app and result"),
            stacked_bars(outcomes, title="Episodes by outcome"),
            histogram(self.step_times, title="Step time (observe to recorded)"),
        )
        return [chart for chart in drawn if chart]


def _row(name: str, entries: list[EpisodeEntry]) -> ResultRow:
    counts = Counter(entry.result for entry in entries)
    verified = sum(1 for entry in entries if entry.verdict is not None)
    return ResultRow(name, len(entries), verified, dict(counts))


__all__ = ["NOT_VERIFIED", "RESULTS", "EpisodeEntry", "ResultRow", "RunSummary"]
