from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mobile_agent.apps import registry as registry_module
from mobile_agent.apps import registry_cache
from mobile_agent.apps.registry import AppRegistry, load_registry

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def registry() -> AppRegistry:
    return load_registry(include_shipped=True, apps_dir=None)


@pytest.fixture
def fixture_xml():
    def read(name: str) -> str:
        return (FIXTURES / name).read_text(encoding="utf-8")

    return read


@pytest.fixture
def disk_cache(tmp_path, monkeypatch) -> Iterator[Path]:
    """A private disk cache for the registry, and the in-process cache emptied before and after (a new process,
    as it were)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(registry_cache.CACHE_ENV, str(folder))
    registry_module._CACHE.clear()
    yield folder
    registry_module._CACHE.clear()
