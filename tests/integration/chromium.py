"""Debian's Chromium for browser tests, through playwright: skips the module (with the reason) when either is
missing; no browser is ever downloaded.

    from tests.integration.chromium import CHROMIUM, CHROMIUM_ARGS, sync_api, wait_until
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
]
if not CHROMIUM.is_file():
    pytest.skip("no Chromium at /usr/bin/chromium (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
)


def wait_until(predicate, timeout: float = 30.0, what: str = "") -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "sync_api", "wait_until"]
