"""The person at the terminal, as the episode loop sees them (a UserChannel), and what `run` / `demo` print while
an episode goes. CLI-only: it prints with rich."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from mobile_agent.agent.config import EpisodeResult, StepEvent

console = Console()


class TerminalUser:
    """Asks on the terminal; answers None (nobody can answer) when standard input is not a terminal."""

    def ask(self, question: str) -> str | None:
        if not sys.stdin.isatty():
            return None
        console.print(f"[bold yellow]The agent asks:[/] {escape(question)}")
        try:
            return input("> ")
        except EOFError:
            return None


def print_step(event: StepEvent) -> None:
    """One line per recorded step: index, source, action (or error), the thought's start, the step's timings."""
    t = event.timings
    timing = " ".join(f"{k} {v:.0f}ms" for k, v in t.items() if k != "total")
    what = event.action.describe() if event.action else f"[red]{escape(event.error or 'no action')}[/]"
    thought = (event.thought or "").replace("\n", " ")
    if len(thought) > 60:
        thought = thought[:57] + "..."
    src = "" if event.source == "model" else f"[magenta]({event.source})[/] "
    console.print(f"[bold]{event.index:>3}[/] {src}{escape(what)}  [dim]{escape(thought)}  {timing}[/]")


def print_outcome(result: EpisodeResult, location: str | None = None) -> None:
    """How the episode ended, its answer or why it failed, and where its trajectory is."""
    colour = "green" if result.ok else "red"
    console.print(
        f"outcome: [bold {colour}]{result.outcome}[/] after {result.steps} steps (episode {result.episode_id})"
    )
    if result.answer:
        console.print(f"answer: {escape(result.answer)}")
    if result.detail and not result.ok:
        console.print(f"detail: {escape(result.detail)}")
    if location:
        console.print(f"trajectory: {escape(location)}  (mobile-agent show {result.episode_id})")


__all__ = ["TerminalUser", "console", "print_outcome", "print_step"]
