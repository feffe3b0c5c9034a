"""Unit tests are hermetic: the user's (or an integration session's) adb and mobile-agent settings never reach them."""

from __future__ import annotations

import os

import pytest

_AMBIENT = ("ANDROID_SERIAL", "ANDROID_ADB_SERVER_PORT", "ADB_SERVER_SOCKET", "MOBILE_AGENT_CONFIG")


@pytest.fixture(autouse=True)
def _no_ambient_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _AMBIENT:
        monkeypatch.delenv(name, raising=False)
    for name in [n for n in os.environ if n.startswith("MOBILE_AGENT_") and n != "MOBILE_AGENT_TEST_PG"]:
        monkeypatch.delenv(name, raising=False)
