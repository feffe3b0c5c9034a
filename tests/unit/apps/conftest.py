from __future__ import annotations

from pathlib import Path

import pytest

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
