"""A private PostgreSQL cluster for tests that restart or stop their database: initdb in a temporary folder, a
server on a free loopback port (no Unix socket), stopped and removed afterwards. The binaries are found under
/usr/lib/postgresql/*/bin (or on PATH); without them the test skips, saying why. As root, the server runs as the
``postgres`` user (PostgreSQL refuses root)."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest


def _binaries() -> Path | None:
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(folder, "initdb").exists() and Path(folder, "pg_ctl").exists():
            return Path(folder)
    found = shutil.which("pg_ctl")
    return Path(found).resolve().parent if found and shutil.which("initdb") else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class PgCluster:
    bin: Path
    data: Path
    port: int
    user: str | None  # run the server as this user (root cannot)

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        command = [str(self.bin / args[0]), *args[1:]]
        if self.user:
            command = ["runuser", "-u", self.user, "--", *command]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=True)

    def pg_ctl(self, *args: str, timeout: float = 60) -> None:
        """pg_ctl with its output (and a restarted server's, which inherits it) in the server log."""
        command = [str(self.bin / "pg_ctl"), "-D", str(self.data), "-s", *args]
        if self.user:
            command = ["runuser", "-u", self.user, "--", *command]
        with open(self.data.parent / "pg_ctl.log", "ab") as log:
            subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, timeout=timeout, check=True)

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c fsync=off"
        self.pg_ctl("start", "-w", "-o", options)

    def restart_fast(self) -> None:
        """`pg_ctl restart -m fast`: every connection is cut, the server is back a moment later."""
        self.pg_ctl("restart", "-m", "fast", "-w")

    def stop(self) -> None:
        self.pg_ctl("stop", "-m", "fast", "-w")


@contextmanager
def private_cluster() -> Iterator[PgCluster]:
    binaries = _binaries()
    if binaries is None:
        pytest.skip(
            "no PostgreSQL server binaries (initdb, pg_ctl) under /usr/lib/postgresql/*/bin or on PATH"
        )
    user = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no postgres user to run a private PostgreSQL server as")
        user = "postgres"
    top = Path(tempfile.mkdtemp(prefix="mobile-agent-pg-"))
    data = top / "data"
    try:
        if user:
            shutil.chown(top, user=user)
        cluster = PgCluster(binaries, data, _free_port(), user)
        cluster._run("initdb", "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", timeout=120)
        cluster.start()
        try:
            yield cluster
        finally:
            try:
                cluster.stop()
            except subprocess.SubprocessError:
                pass
    finally:
        shutil.rmtree(top, ignore_errors=True)
