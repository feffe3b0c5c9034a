"""A document read from a file as plain data, with the line where each item starts (apps/yamlsrc.py reads them).

Its own module so that what keeps a document (the registry's record of where each manifest came from, loaded from
the disk cache) does not need the YAML reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Loc = tuple[Any, ...]


@dataclass(frozen=True)
class LineMappedDoc:
    """A YAML document as plain Python data and ``lines[loc]``: the 1-based line where the item at loc starts."""

    path: str
    data: Any
    lines: dict[Loc, int]

    def line_of(self, loc: Loc) -> int:
        """The line of the deepest known item on the way to loc (a missing key reports its parent's line)."""
        for end in range(len(loc), -1, -1):
            line = self.lines.get(tuple(loc[:end]))
            if line is not None:
                return line
        return 1


__all__ = ["Loc", "LineMappedDoc"]
