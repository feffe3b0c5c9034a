"""The console the commands print their results on (tables, step lines), as wide as its contents in a pipe.

rich lays out for 80 columns when standard output is not a terminal, so `mobile-agent episodes | cat` cut serials
and tasks ("127.0.0.1:2…") and step lines wrapped. Like `adb devices -l`, output that goes to a file or another
program is never cut: there the console is as wide as what it prints (a table its natural width, a line unwrapped),
unless COLUMNS says otherwise. On a terminal rich's layout is kept.
"""

from __future__ import annotations

import os

from rich.console import Console, ConsoleDimensions

PIPE_WIDTH = 10_000  # "no limit" for rich: a table takes its natural width, a line is never wrapped


class OutputConsole(Console):
    """rich's Console whose width, when its file is not a terminal and COLUMNS is unset, is no limit."""

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if self._width is None and not self.is_terminal and not os.environ.get("COLUMNS"):
            return ConsoleDimensions(PIPE_WIDTH, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size


def output_console(**options: object) -> OutputConsole:
    """The console for a command's results on standard output (or ``file=``)."""
    return OutputConsole(**options)  # type: ignore[arg-type]


__all__ = ["PIPE_WIDTH", "OutputConsole", "output_console"]
