"""The person at the terminal, as the episode loop sees them (a UserChannel), and what `run` / `demo` print while
an episode goes. CLI-only: it prints with rich."""

from __future__ import annotations

import re
import select
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from datetime import datetime

    from rich.console import Console

    from mobile_agent.agent.config import EpisodeResult, StepEvent
    from mobile_agent.store.store import TrajectoryStore


class _Console:
    """rich's Console, made on the first print: `run` reaches its first step without importing rich (~13 ms)."""

    @cached_property
    def _rich(self) -> Console:
        from mobile_agent.cli.output import output_console

        return output_console()

    def print(self, *objects: Any, **options: Any) -> None:
        self._rich.print(*objects, **options)


console = _Console()

# Terminal escape sequences a model (or a phone's screen text) could smuggle into our output: CSI (colours, cursor
# moves, erase), OSC (window title, hyperlinks, clipboard writes), DCS/SOS/PM/APC strings, two-character escapes,
# and their 8-bit forms; then every remaining C0/C1 control but newline and tab, and the bidi overrides that make
# text read differently from what it is.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b[\]PX^_].*?(?:\x07|\x1b\\|\x9c|\Z)"
    r"|\x1b[ -/]*[0-~]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|[\x90\x98\x9d\x9e\x9f].*?(?:\x07|\x1b\\|\x9c|\Z)",
    re.S,
)
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` safe to print on a terminal: escape sequences and control characters removed (newline, tab kept)."""
    if not text:
        return text
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def shown(text: str | None) -> str:
    """Model or phone text as rich markup that prints literally: controls stripped, markup escaped."""
    from rich.markup import escape

    return escape(printable(text or ""))


class TerminalUser:
    """Asks on the terminal; answers None (nobody can answer) when standard input is not a terminal, and says so
    once: the question then waits where a person can answer it."""

    def __init__(self, reserve_s: float | None = None) -> None:
        self._said_no_terminal = False
        self.reserve_s = reserve_s  # how long a pause books the phone (said when nobody can answer here)

    def ask(self, question: str) -> str | None:
        return self.ask_until(question, lambda: False)

    def ask_until(self, question: str, stopped: Callable[[], bool]) -> str | None:
        """The line the person types after seeing the question (whatever was typed before it is discarded); None
        at end of input, or once ``stopped()`` (the episode no longer needs the answer: its phone was taken
        over). Standard input is polled, so nothing is left reading it."""
        if not sys.stdin.isatty():
            self._say_no_terminal()
            return None
        _discard_typed_ahead()
        console.print(f"[bold yellow]The agent asks:[/] {shown(question)}")
        print("> ", end="", flush=True)
        while not stopped():
            try:
                ready, _, _ = select.select([sys.stdin], [], [], 0.2)
            except (OSError, ValueError):  # a terminal select cannot watch: wait for the line itself
                ready = [sys.stdin]
            if ready:
                line = sys.stdin.readline()
                return line.removesuffix("\n") if line else None
        print()
        return None

    def _say_no_terminal(self) -> None:
        if self._said_no_terminal:
            return
        self._said_no_terminal = True
        from rich.console import Console

        booked = "keeps its phone booked"
        if self.reserve_s is not None:
            import datetime as dt

            until = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=self.reserve_s)
            booked += f" until about {until:%H:%M:%S} UTC"
        Console(stderr=True).print(
            f"standard input is not a terminal, so nobody can answer here: the episode pauses (needs_user) and "
            f"{booked} (`mobile-agent inbox release EPISODE` frees it); answer in `mobile-agent inbox`, in the "
            "console (`mobile-agent console`), or with `mobile-agent resume EPISODE --reply yes|no`",
            highlight=False,
        )


def _discard_typed_ahead() -> None:
    """Throw away what was typed before the question was shown: a key pressed by habit, or while the agent
    worked, must not answer a question nobody has read yet (termios; elsewhere nothing to discard)."""
    try:
        import termios

        termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
    except (ImportError, OSError, ValueError):
        pass


def print_step(event: StepEvent) -> None:
    """One line per recorded step: index, source, action (or error), the thought's start, the step's timings."""
    t = event.timings
    timing = " ".join(f"{k} {v:.0f}ms" for k, v in t.items() if k != "total")
    what = shown(event.action.describe()) if event.action else f"[red]{shown(event.error or 'no action')}[/]"
    thought = printable(event.thought or "").replace("\n", " ")
    if len(thought) > 60:
        thought = thought[:57] + "..."
    src = "" if event.source == "model" else f"[magenta]({shown(str(event.source))})[/] "
    console.print(f"[bold]{event.index:>3}[/] {src}{what}  [dim]{shown(thought)}  {timing}[/]")


def print_outcome(result: EpisodeResult, location: str | None = None) -> None:
    """How the episode ended, its answer or why it failed, and where its trajectory is."""
    colour = "green" if result.ok else "red"
    console.print(
        f"outcome: [bold {colour}]{result.outcome}[/] after {result.steps} steps (episode {result.episode_id})"
    )
    if result.answer:
        console.print(f"answer: {shown(result.answer)}")
    if result.detail and not result.ok:
        console.print(f"detail: {shown(result.detail)}")
    if location:
        console.print(f"trajectory: {shown(location)}  (mobile-agent show {result.episode_id})")


def booked_until(store: TrajectoryStore, episode_id: str) -> datetime | None:
    """Until when a paused episode keeps its phone booked (None: it did not pause, or the booking is over)."""
    from mobile_agent.store.convert import now_utc
    from mobile_agent.store.pauses import open_pause

    pause = open_pause(store, episode_id)
    return pause.reserved_until if pause is not None and pause.reserved(now_utc()) else None


def print_booked(episode_id: str, serial: str, until: datetime) -> None:
    """The phone a paused episode keeps: until when, and the command that frees it sooner."""
    console.print(
        f"phone {shown(serial)} is booked for episode {episode_id} until {until:%Y-%m-%d %H:%M:%S} UTC: other runs "
        f"and batches wait for it; free it now with: mobile-agent inbox release {episode_id}",
        highlight=False,
    )


@contextmanager
def interruption_said() -> Iterator[None]:
    """Ctrl-C, SIGTERM or a stop from outside (the phone taken over by another run) end the command with exit 130
    and one line on stderr saying why; the episode has been recorded as interrupted by then."""
    try:
        yield
    except KeyboardInterrupt as stopped:
        detail = getattr(stopped, "detail", None)  # EpisodeStopped says why; Ctrl-C does not need to
        from rich.console import Console

        Console(stderr=True).print(
            f"interrupted: {shown(detail)}" if detail else "interrupted", highlight=False
        )
        raise typer.Exit(130) from None


__all__ = [
    "TerminalUser",
    "console",
    "interruption_said",
    "print_outcome",
    "print_step",
    "printable",
    "shown",
]
