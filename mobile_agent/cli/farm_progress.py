"""What a run looks like on the terminal: the live table of the phones and an overall bar while it runs, fed by
the pool's progress events, and the summary when it ends (``batch``, ``worker``, ``runs show``)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.console import Group
from rich.live import Live
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from mobile_agent.cli.farm_options import console
from mobile_agent.cli.terminal import printable, shown

if TYPE_CHECKING:  # the commands import the library when they run, so `mobile-agent --help` stays quick
    from mobile_agent.farm.scheduler.jobs import ProgressEvent
    from mobile_agent.farm.scheduler.summary import RunSummary


@dataclass
class _PhoneRow:
    task: str = ""
    step: int | None = None
    started: float | None = None
    outcome: str = ""


@dataclass
class ProgressView:
    """Keeps what the live table shows, fed by the pool's progress events (thread-safe)."""

    total: int
    done: int = 0
    rows: dict[str, _PhoneRow] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    # episode -> "phone: question — the command to answer"
    waiting: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def on_event(self, event: ProgressEvent) -> None:
        with self._lock:
            if event.kind == "unmet":  # pending tasks no phone here can take (farm/scheduler/unmet)
                self.lines.append(printable(f"no phone can take: {event.detail or ''}"))
                return
            if event.kind == "waiting" and event.episode_id:
                self.waiting[event.episode_id] = printable(f"{event.phone}: {event.detail or ''}")
            elif event.kind in ("answered", "expired") and event.episode_id:
                self.waiting.pop(event.episode_id, None)
            if event.kind in ("waiting", "answered", "expired", "continued"):
                self.lines.append(
                    printable(f"{event.phone}: {event.kind} {event.episode_id} {event.detail or ''}")
                )
                if event.kind == "continued":
                    self.rows.setdefault(event.phone, _PhoneRow()).outcome = event.outcome or "continued"
                return
            row = self.rows.setdefault(event.phone, _PhoneRow())
            kind = event.kind
            if kind == "claimed":
                row.task, row.step, row.started, row.outcome = (
                    event.task or "",
                    None,
                    time.monotonic(),
                    "running",
                )
            elif kind == "step":
                row.step = event.step
            elif kind in ("done", "failed", "retry", "lost"):
                row.outcome = event.outcome or kind
                row.started = None
                if kind in ("done", "failed"):
                    self.done += 1
            elif kind in (
                "quarantined",
                "probe_failed",
                "restored",
                "endpoint_down",
                "busy_elsewhere",
                "reserved",
            ):
                row.outcome = kind
            if kind in (
                "retry",
                "failed",
                "quarantined",
                "restored",
                "endpoint_down",
                "busy_elsewhere",
                "lost",
                "reserved",
            ) or (kind == "done" and event.outcome == "needs_user"):
                self.lines.append(
                    printable(
                        f"{event.phone}: {kind} {event.label or ''} {event.detail or event.outcome or ''}"
                    )
                )

    def table(self) -> Table:
        table = Table("phone", "task", "step", "elapsed", "outcome", expand=False)
        with self._lock:
            for phone, row in sorted(self.rows.items()):
                elapsed = f"{time.monotonic() - row.started:.0f}s" if row.started is not None else ""
                colour = "green" if row.outcome in ("finished", "answered") else "yellow"
                table.add_row(
                    shown(phone),
                    shown(row.task[:50]),
                    "" if row.step is None else str(row.step + 1),
                    elapsed,
                    f"[{colour}]{shown(row.outcome)}[/]",
                )
        return table

    def waiting_lines(self) -> list[str]:
        """The line "waiting for a person: N", then each question with the command that answers it."""
        with self._lock:
            if not self.waiting:
                return []
            return [
                f"waiting for a person: {len(self.waiting)}",
                *(f"  {e} {line}" for e, line in self.waiting.items()),
            ]


class LiveDisplay:
    """The rich live table and an overall bar with ETA; plain event lines when stdout is not a terminal."""

    def __init__(self, view: ProgressView, enabled: bool) -> None:
        self.view = view
        self.enabled = enabled and console.is_terminal
        self.plain = enabled and not console.is_terminal
        self.progress = Progress(
            TextColumn("tasks"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
        )
        self.bar = self.progress.add_task("tasks", total=view.total, completed=view.done)
        self.live: Live | None = None

    def on_event(self, event: ProgressEvent) -> None:
        self.view.on_event(event)
        self.progress.update(self.bar, completed=self.view.done)
        if self.plain and event.kind in (
            "done",
            "failed",
            "retry",
            "quarantined",
            "restored",
            "endpoint_down",
            "reserved",
            "waiting",
            "answered",
            "expired",
            "continued",
        ):
            what = event.outcome or event.detail or ""
            if event.kind == "waiting":
                what = f"{event.episode_id} {event.detail or ''} (waiting for a person: {len(self.view.waiting)})"
            line = printable(f"{event.phone} {event.kind} {event.label or ''} {what}")
            console.print(line, highlight=False, markup=False)
        elif event.kind == "unmet" and (self.plain or self.enabled):  # above the live table on a terminal
            console.print(
                printable(f"no phone can take: {event.detail or ''}"), highlight=False, markup=False
            )

    def __enter__(self) -> LiveDisplay:
        if self.enabled:
            self.live = Live(
                console=console,
                refresh_per_second=4,
                get_renderable=lambda: Group(
                    self.view.table(), self.progress, *(shown(line) for line in self.view.waiting_lines())
                ),
            )
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.__exit__(None, None, None)


def render_summary(summary: RunSummary) -> None:
    counts = summary.counts
    console.print(
        f"[bold]run {summary.run_id}[/] ({escape(summary.name)}, {summary.status}): {counts.total} task(s): "
        f"{counts.done} with a result, {counts.failed} failed on infrastructure, {counts.pending} pending, "
        f"{counts.claimed} running"
        + (f", {counts.waiting} waiting for a person" if counts.waiting else "")
        + (f", {counts.expired} expired" if counts.expired else "")
        + f"; {summary.episodes} episode(s), {summary.retries} retr"
        f"{'y' if summary.retries == 1 else 'ies'}"
    )
    if summary.successes is None:
        console.print(f"success: not verified; finished (unverified): {summary.finished_unverified}")
    else:
        verified = " ".join(f"{k} {v}" for k, v in sorted(summary.verdicts.items()))
        console.print(
            f"success (verified complete): [bold]{summary.successes}[/]"
            + (f"  [dim]verdicts: {verified}[/]" if verified else "")
            + f"; finished (unverified): {summary.finished_unverified}"
        )
    for title, groups in (("outcome by app", summary.by_app), ("outcome by phone", summary.by_phone)):
        if not groups:
            continue
        outcomes = sorted({o for g in groups.values() for o in g})
        table = Table(title.split()[-1], *outcomes, title=title, title_justify="left")
        for key, group in sorted(groups.items()):
            table.add_row(escape(key), *[str(group.get(o, 0)) for o in outcomes])
        console.print(table)
    if summary.quarantined:
        console.print(f"[yellow]quarantined:[/] {', '.join(summary.quarantined)}")
    for unmet in summary.unmet:
        phones = "; ".join(f"{serial}: {', '.join(tags) or '-'}" for serial, tags in unmet["phones"].items())
        lacking = ", ".join(unmet["missing"]) or "them all on one phone"
        console.print(
            f"[yellow]no phone can take {unmet['tasks']} task(s):[/] requires {escape(', '.join(unmet['requires']))}; "
            f"no phone has {escape(lacking)} (phones' tags: {escape(phones or 'no phone')}); "
            "add the tags to a phone in the devices file, or attach one that has them",
            highlight=False,
        )
    if summary.waiting:
        console.print(
            f"[magenta]waiting for a person: {len(summary.waiting)}[/] (see them all: mobile-agent inbox)"
        )
        asked = {q["episode"]: q for q in summary.questions}
        for episode_id in summary.waiting:
            q = asked.get(episode_id)
            if q is None:
                console.print(f"  {episode_id}: mobile-agent inbox answer {episode_id} --reply yes|no|TEXT")
                continue
            first = next((ln for ln in q["question"].splitlines() if ln.strip()), q["kind"])
            console.print(f"  {episode_id} on {shown(q['phone'])}: {shown(first.strip())}", highlight=False)
            console.print(f"    answer: {shown(q['answer'])}", highlight=False)
    if summary.expired:
        console.print(
            f"[magenta]expired (nobody answered in time):[/] {len(summary.expired)}: {', '.join(summary.expired)}; "
            f"queue them again with: mobile-agent batch --resume {summary.run_id}"
        )


__all__ = [
    "LiveDisplay",
    "ProgressView",
    "render_summary",
]
