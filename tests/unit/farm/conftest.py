"""Fixtures for the farm's unit tests: a store in a temporary directory (fakes live in farm_fakes.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mobile_agent.store.store import TrajectoryStore


@pytest.fixture(autouse=True)
def _no_store_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MOBILE_AGENT_DB", raising=False)
    monkeypatch.delenv("MOBILE_AGENT_DATA", raising=False)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[TrajectoryStore]:
    with TrajectoryStore.open(root=tmp_path / "replays") as opened:
        yield opened
