"""Shared test set-up for the whole suite.

Keep this file small: fixtures that only one area needs live in that area's conftest.py.
"""

from __future__ import annotations

import socket

import pytest


@pytest.fixture
def free_tcp_port() -> int:
    """A loopback TCP port that nothing listens on right now (never 5555-5585, which adb servers probe)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if not 5555 <= port <= 5585:
            return port
