"""Fixtures for the trajectory store tests: a store in a temporary directory and small real JPEG screenshots."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from mobile_agent.store.records import EpisodeInfo
from mobile_agent.store.store import TrajectoryStore


def jpeg_bytes(seed: int = 0, size: tuple[int, int] = (36, 64)) -> bytes:
    """A real JPEG whose pixels depend on ``seed``, so different steps have different hashes."""
    image = Image.new("RGB", size, ((seed * 37) % 256, (seed * 91) % 256, (seed * 53) % 256))
    out = io.BytesIO()
    image.save(out, format="JPEG")
    return out.getvalue()


@pytest.fixture
def make_jpeg():
    return jpeg_bytes


@pytest.fixture(autouse=True)
def _no_store_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # A developer's own MOBILE_AGENT_DB must never leak into (or be written by) the tests.
    monkeypatch.delenv("MOBILE_AGENT_DB", raising=False)
    monkeypatch.delenv("MOBILE_AGENT_DATA", raising=False)


@pytest.fixture
def store_root(tmp_path: Path) -> Path:
    return tmp_path / "replays"


@pytest.fixture
def store(store_root: Path) -> Iterator[TrajectoryStore]:
    with TrajectoryStore.open(root=store_root) as opened:
        yield opened


@pytest.fixture
def episode(store: TrajectoryStore) -> EpisodeInfo:
    return store.start_episode(
        "open the settings", device="emulator-5554", family="venus", model="ui-venus-2"
    )
