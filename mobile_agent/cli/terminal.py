"""The person at the terminal, as the episode loop sees them (a UserChannel). CLI-only: it prints with rich."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.markup import escape

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
