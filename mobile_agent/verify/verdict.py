"""Verdict records and how several judges' votes become one verdict.

Conservative order (least credit to the agent first): ``failed < partial < infeasible < complete``.

- ``failed``: nothing the task asked for is shown to be done.
- ``partial``: some completion points are met, not all. Work is left; it is never success.
- ``infeasible``: the task cannot be done on this phone (the contact does not exist...). It excuses the agent, so it
  needs as much agreement as ``complete`` and ranks just below it.
- ``complete``: every completion point is met.

A tie between verdicts goes to the lowest one in this order, so a tie can never promote ``partial`` to ``complete``.
Only ``complete`` is success (``Verdict.is_success``); every count of successes in the product goes through it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Verdict(str, Enum):
    FAILED = "failed"
    PARTIAL = "partial"
    INFEASIBLE = "infeasible"
    COMPLETE = "complete"

    def __str__(self) -> str:
        return str(self.value)

    @property
    def rank(self) -> int:
        """Position in the conservative order: 0 is the verdict that gives the agent the least credit."""
        return _ORDER.index(self)

    @property
    def is_success(self) -> bool:
        """True only for ``complete``. A partial task is not a success anywhere in the product."""
        return self is Verdict.COMPLETE

    @classmethod
    def parse(cls, value: str) -> Verdict:
        """From a judge's or a user's spelling ("Complete", " partial ")."""
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            known = ", ".join(v.value for v in cls)
            raise ValueError(f"unknown verdict {value!r} (known: {known})") from None


_ORDER = (Verdict.FAILED, Verdict.PARTIAL, Verdict.INFEASIBLE, Verdict.COMPLETE)


def most_conservative(verdicts: Iterable[Verdict]) -> Verdict:
    """The verdict that gives the least credit, e.g. ``partial`` of ``{complete, partial}``."""
    return min(verdicts, key=lambda v: v.rank)


@dataclass(frozen=True)
class CompletionPoint:
    """One verifiable thing the task asks for. ``met`` is None when it could not be evaluated.

    ``step`` is the index of the step whose screen shows it (None when no step shows it, or the evidence is the
    phone's state after the episode).
    """

    description: str
    met: bool | None
    step: int | None = None
    evidence: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "description": self.description,
            "met": self.met,
            "step": self.step,
            "evidence": self.evidence,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CompletionPoint:
        met = data.get("met")
        step = data.get("step")
        return cls(
            description=str(data.get("description", "")),
            met=None if met is None else bool(met),
            step=None if step is None else int(step),
            evidence=str(data.get("evidence") or ""),
        )


def verdict_from_points(points: Sequence[CompletionPoint]) -> Verdict | None:
    """complete when every evaluated point is met, partial when some are, failed when none; None if none evaluated."""
    evaluated = [p for p in points if p.met is not None]
    if not evaluated:
        return None
    met = sum(1 for p in evaluated if p.met)
    if met == len(evaluated):
        return Verdict.COMPLETE
    return Verdict.PARTIAL if met else Verdict.FAILED


@dataclass(frozen=True)
class CheckVerdict:
    """What the checks declared with a task found. ``authoritative`` when a point came from the phone's state or a
    hook (ground truth), not only from the final screen."""

    points: list[CompletionPoint]
    authoritative: bool = False

    @property
    def verdict(self) -> Verdict | None:
        return verdict_from_points(self.points)

    @property
    def reasons(self) -> list[str]:
        return [f"{'met' if p.met else 'unmet'}: {p.description}" for p in self.points if p.met is not None]


@dataclass(frozen=True)
class JudgeVote:
    """One judge's verdict on one episode."""

    judge: str  # base URL or name of the endpoint
    model: str
    verdict: Verdict
    points: list[CompletionPoint] = field(default_factory=list)
    rationale: str = ""
    latency_s: float | None = None


@dataclass(frozen=True)
class VoteResult:
    """How the judges voted. ``agreement`` is the share of votes that agree with the result (1.0: unanimous)."""

    verdict: Verdict
    votes: list[JudgeVote]
    tally: dict[Verdict, int]
    tie: bool

    @property
    def agreement(self) -> float:
        return self.tally.get(self.verdict, 0) / len(self.votes)

    @property
    def unanimous(self) -> bool:
        return len(self.tally) == 1

    @property
    def dissent(self) -> list[JudgeVote]:
        return [v for v in self.votes if v.verdict is not self.verdict]

    def describe(self) -> str:
        """e.g. "partial by 2 of 3 judges (dissent: j3=complete)" or "failed on a tie (complete 1, failed 1)"."""
        counts = ", ".join(
            f"{v.value} {n}" for v, n in sorted(self.tally.items(), key=lambda kv: -kv[0].rank)
        )
        if self.tie:
            return f"{self.verdict.value} on a tie ({counts}), the more conservative verdict"
        text = f"{self.verdict.value} by {self.tally[self.verdict]} of {len(self.votes)} judge(s)"
        if self.dissent:
            text += " (dissent: " + ", ".join(f"{v.judge}={v.verdict.value}" for v in self.dissent) + ")"
        return text


def vote(votes: Sequence[JudgeVote]) -> VoteResult:
    """The most common verdict wins; a tie for the most votes goes to the most conservative of the tied ones."""
    if not votes:
        raise ValueError("no votes to count")
    tally = Counter(v.verdict for v in votes)
    top = max(tally.values())
    leaders = [verdict for verdict, count in tally.items() if count == top]
    return VoteResult(most_conservative(leaders), list(votes), dict(tally), tie=len(leaders) > 1)


@dataclass(frozen=True)
class FinalVerdict:
    """The verdict of one episode, with where it came from.

    ``source``: "check" (the task's checks decided), "judges" (the vote decided), or "check+judges" (a screen-only
    check and the vote were combined, the more conservative one winning).
    """

    verdict: Verdict
    source: str
    reasons: list[str]
    points: list[CompletionPoint]
    check: CheckVerdict | None = None
    votes: VoteResult | None = None

    @property
    def is_success(self) -> bool:
        return self.verdict.is_success

    @property
    def agreement(self) -> float | None:
        """Share of judges agreeing with the final verdict; None without judges."""
        if self.votes is None:
            return None
        return sum(1 for v in self.votes.votes if v.verdict is self.verdict) / len(self.votes.votes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict.value,
            "success": self.is_success,
            "source": self.source,
            "reasons": list(self.reasons),
            "points": [p.to_dict() for p in self.points],
            "agreement": self.agreement,
            "votes": [
                {"judge": v.judge, "model": v.model, "verdict": v.verdict.value, "rationale": v.rationale}
                for v in (self.votes.votes if self.votes else [])
            ],
        }


def combine(check: CheckVerdict | None, votes: Sequence[JudgeVote] = ()) -> FinalVerdict | None:
    """One verdict from the task's checks and the judges' votes.

    - A check with ground truth (phone state or a hook) decides alone; judges that disagree show as dissent.
    - A check that saw only the final screen and a vote: the more conservative of the two (a judge cannot overrule a
      missing text, and a check cannot see everything the judges see).
    - Otherwise whichever exists; None when neither does.
    """
    check_verdict = check.verdict if check is not None else None
    result = vote(votes) if votes else None
    if check_verdict is not None and check is not None and (check.authoritative or result is None):
        reasons = ["checks: " + "; ".join(check.reasons)]
        if result is not None:
            reasons.append("judges: " + result.describe())
        return FinalVerdict(check_verdict, "check", reasons, list(check.points), check, result)
    if result is None:
        return None
    reasons = ["judges: " + result.describe()]
    points = _points_of_winners(result)
    if check_verdict is not None and check is not None:
        reasons.insert(0, "checks: " + "; ".join(check.reasons))
        final = most_conservative([check_verdict, result.verdict])
        return FinalVerdict(final, "check+judges", reasons, list(check.points) + points, check, result)
    return FinalVerdict(result.verdict, "judges", reasons, points, None, result)


def _points_of_winners(result: VoteResult) -> list[CompletionPoint]:
    winner = next((v for v in result.votes if v.verdict is result.verdict and v.points), None)
    return list(winner.points) if winner else []


@dataclass(frozen=True)
class Summary:
    """Counts of verdicts over many episodes. ``successes`` counts ``complete`` only."""

    total: int
    counts: dict[str, int]
    unverified: int

    @property
    def successes(self) -> int:
        return self.counts.get(Verdict.COMPLETE.value, 0)

    @property
    def success_rate(self) -> float | None:
        """Successes over verified episodes; None when nothing was verified."""
        verified = self.total - self.unverified
        return self.successes / verified if verified else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "successes": self.successes,
            "success_rate": self.success_rate,
            "unverified": self.unverified,
            **{v.value: self.counts.get(v.value, 0) for v in Verdict},
        }


def summarize(verdicts: Iterable[Verdict | FinalVerdict | None]) -> Summary:
    """Batch summary: how many episodes got each verdict. None (not verified) counts as unverified, not success."""
    counts: Counter[str] = Counter()
    total = unverified = 0
    for item in verdicts:
        total += 1
        if item is None:
            unverified += 1
            continue
        verdict = item.verdict if isinstance(item, FinalVerdict) else Verdict(item)
        counts[verdict.value] += 1
    return Summary(total, dict(counts), unverified)


__all__ = [
    "CheckVerdict",
    "CompletionPoint",
    "FinalVerdict",
    "JudgeVote",
    "Summary",
    "Verdict",
    "VoteResult",
    "combine",
    "most_conservative",
    "summarize",
    "verdict_from_points",
    "vote",
]
