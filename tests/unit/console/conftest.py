"""Fixtures for the console's unit tests: a store in a temporary directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mobile_agent.store.store import TrajectoryStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[TrajectoryStore]:
    with TrajectoryStore.open(root=tmp_path / "replays") as opened:
        yield opened
