"""Integration fixtures: a private adb server for the session and farms of simulated phones registered with it.

Nothing here touches a user's adb server on 5037: the server runs from the adbutils-bundled binary on a free port,
ADBUTILS_ADB_PATH pins that binary, and ANDROID_ADB_SERVER_PORT points any stray `adb start-server` at the same
private port. Every farm is disconnected and stopped at teardown, and the server is killed at the end.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator

import pytest

from mobile_agent.sim.farm import AdbServer, SimFarm, bundled_adb_path, free_port


@pytest.fixture(scope="session")
def adb_server() -> Iterator[AdbServer]:
    pinned = {"ADBUTILS_ADB_PATH": bundled_adb_path()}
    port = free_port()
    pinned["ANDROID_ADB_SERVER_PORT"] = str(port)
    saved = {key: os.environ.get(key) for key in pinned}
    os.environ.update(pinned)
    server = AdbServer(port).ensure_running()
    try:
        yield server
    finally:
        server.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture
def sim_farm(adb_server: AdbServer) -> Iterator[Callable[..., SimFarm]]:
    """Factory: `farm = sim_farm(n=2, profile="instant", ...)` — a started SimFarm on the session's adb server."""
    farms: list[SimFarm] = []

    def make(n: int = 1, **kwargs) -> SimFarm:
        farm = SimFarm(n, adb_port=adb_server.port, **kwargs).start()
        farms.append(farm)
        return farm

    yield make
    for farm in reversed(farms):
        farm.stop()


@pytest.fixture(scope="session")
def adb(adb_server: AdbServer) -> Callable[..., subprocess.CompletedProcess]:
    """Run the real adb binary against the private server: `adb("-s", serial, "shell", "id")` (bytes output)."""

    def run(*args: str, timeout: float = 60, check: bool = True) -> subprocess.CompletedProcess:
        cmd = [adb_server.adb_path, "-P", str(adb_server.port), *args]
        return subprocess.run(
            cmd, capture_output=True, timeout=timeout, check=check, stdin=subprocess.DEVNULL
        )

    return run
