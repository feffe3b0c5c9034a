"""CLI fixtures: `mobile-agent` commands running in the background as a user starts them in other terminals.

`background` starts them in the test's folder with the environment of the `cli_env` fixture (a module overrides
`cli_env` when its commands need another one); everything it started is stopped with Ctrl-C at teardown.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mobile_agent.sim.farm import free_port, free_port_block

CLI = [sys.executable, "-m", "mobile_agent.cli.app"]


def free_ports(phones: int) -> tuple[int, int]:
    """(adb port, base port) with base..base+phones-1 free and apart from the adb port."""
    while True:
        base, adb = free_port_block(phones), free_port()
        if not base <= adb < base + phones:
            return adb, base


def home_env(home: Path) -> dict[str, str]:
    """The user's environment with HOME in `home`, no MOBILE_AGENT_DB and wide tables."""
    env = dict(os.environ)
    env.pop("MOBILE_AGENT_DB", None)
    env["COLUMNS"] = "200"
    env["HOME"] = str(home)
    return env


def finished(
    args: list[str], cwd: Path, env: dict[str, str], timeout: float, **kw
) -> subprocess.CompletedProcess:
    """`mobile-agent ARGS` run to its end with nothing on stdin, its output captured as text."""
    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        **kw,
    )


def listening(port: int) -> bool:
    """Whether something accepts connections on the loopback port."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


def stop(*procs: subprocess.Popen) -> None:
    """Ctrl-C to each, then wait; a process that ignores it for 20 s is killed."""
    for proc in procs:
        proc.send_signal(signal.SIGINT)
    for proc in procs:
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass(frozen=True)
class SimPhones:
    """What `sim up` printed: one serial a phone, all behind one adb server."""

    adb_port: int
    serials: list[str]

    @property
    def adb(self) -> str:
        return f"127.0.0.1:{self.adb_port}"


class Background:
    """Starts `mobile-agent` commands in `cwd` with `env`, reads their first lines, and stops them all on close."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.cwd, self.env = cwd, env
        self.started: list[subprocess.Popen] = []

    def start(self, *args: str) -> subprocess.Popen:
        proc = subprocess.Popen(
            [*CLI, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=self.cwd,
            env=self.env,
        )
        self.started.append(proc)
        return proc

    def sim_up(self, phones: int, scenario: str | None = None) -> tuple[subprocess.Popen, int]:
        """`sim up --phones N` on private ports, not yet waited for: (the process, its adb port)."""
        adb_port, base_port = free_ports(phones)
        args = [
            "sim",
            "up",
            "--phones",
            str(phones),
            "--adb-port",
            str(adb_port),
            "--base-port",
            str(base_port),
        ]
        return self.start(*args, *(["--scenario", scenario] if scenario else [])), adb_port

    def sim_model(self, family: str) -> tuple[subprocess.Popen, str]:
        """`sim model` on a free port, not yet waited for: (the process, its base URL)."""
        port = free_port()
        return self.start(
            "sim", "model", "--port", str(port), "--family", family
        ), f"http://127.0.0.1:{port}/v1"

    @staticmethod
    def serials(up: subprocess.Popen, phones: int) -> list[str]:
        """The serials `sim up` prints once its phones answer."""
        serials = [up.stdout.readline().strip() for _ in range(phones)]
        assert all(serials), up.stderr.read()
        return serials

    @staticmethod
    def banner(server: subprocess.Popen, url: str) -> None:
        """Waits for a `sim` server's first line, which names its URL."""
        assert url in server.stdout.readline(), server.stderr.read()

    def phones(self, count: int, scenario: str | None = None) -> SimPhones:
        up, adb_port = self.sim_up(count, scenario)
        return SimPhones(adb_port, self.serials(up, count))

    def model(self, family: str) -> str:
        """A started `sim model`'s base URL."""
        proc, base_url = self.sim_model(family)
        self.banner(proc, "http://127.0.0.1")
        return base_url

    def phones_and_model(self, count: int, scenario: str, family: str) -> tuple[SimPhones, str]:
        """`sim up` and `sim model` started together, as a user starts them in two terminals."""
        up, adb_port = self.sim_up(count, scenario)
        model, base_url = self.sim_model(family)
        phones = SimPhones(adb_port, self.serials(up, count))
        self.banner(model, "http://127.0.0.1")
        return phones, base_url

    def close(self) -> None:
        stop(*reversed(self.started))


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """The environment the background commands run in; a module overrides this fixture to change it."""
    return home_env(tmp_path)


@pytest.fixture
def background(tmp_path: Path, cli_env: dict[str, str]) -> Iterator[Background]:
    bg = Background(tmp_path, cli_env)
    try:
        yield bg
    finally:
        bg.close()


@pytest.fixture(scope="module")
def module_background(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Background]:
    """`background` for a whole module, in a folder of its own."""
    tmp = tmp_path_factory.mktemp("background")
    bg = Background(tmp, home_env(tmp))
    try:
        yield bg
    finally:
        bg.close()
