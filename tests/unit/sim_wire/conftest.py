"""Fixtures for the wire-side unit tests (the fake phone lives in sim_wire_fakes.py)."""

from __future__ import annotations

import pytest
from sim_wire_fakes import FakePhone, Runner


@pytest.fixture
def phone() -> FakePhone:
    return FakePhone()


@pytest.fixture
def sh(phone: FakePhone) -> Runner:
    return Runner(phone)
