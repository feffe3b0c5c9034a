"""`sim up` as a user runs it: serials on stdout, phones usable through adb, Ctrl-C cleans everything up."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time

import pytest
import typer
from typer.testing import CliRunner

from mobile_agent.cli.sim import up_command
from mobile_agent.errors import UserError
from mobile_agent.sim.farm import AdbServer, free_port

THROWAWAY_APP = (
    "import typer; from mobile_agent.cli.sim import up_command; "
    "app = typer.Typer(); app.command()(up_command); app()"
)


def free_port_pair() -> int:
    """A port P such that P and P+1 are both free (and outside 5555-5585)."""
    for _ in range(50):
        port = free_port()
        try:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", port + 1))
        except OSError:
            continue
        if not 5555 <= port + 1 <= 5585:
            return port
    raise RuntimeError("no pair of free ports")


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_sim_up_prints_serials_serves_and_cleans_up(stop_signal):
    adb_port, base_port = free_port(), free_port_pair()
    cmd = [sys.executable, "-c", THROWAWAY_APP, "--phones", "2", "--adb-port", str(adb_port)]
    cmd += ["--base-port", str(base_port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        serials = [proc.stdout.readline().strip() for _ in range(2)]
        assert serials == [f"127.0.0.1:{base_port}", f"127.0.0.1:{base_port + 1}"], proc.stderr.read()
        server = AdbServer(adb_port)
        assert server.is_running()
        states = {info.serial: info.state for info in server.client.list()}
        assert all(states.get(serial) == "device" for serial in serials), states
        assert server.client.device(serials[1]).shell("getprop ro.product.model") == "SimPhone"
        proc.send_signal(stop_signal)
        assert proc.wait(timeout=20) == 0
        assert "stopped" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (listening(adb_port) or listening(base_port)):
        time.sleep(0.1)
    assert not listening(adb_port), "the adb server it started is still running"
    assert not listening(base_port) and not listening(base_port + 1), "a simulated phone still listens"


def test_sim_up_reuses_a_running_adb_server_and_leaves_it_running(adb_server):
    base_port = free_port_pair()
    cmd = [
        sys.executable,
        "-c",
        THROWAWAY_APP,
        "--adb-port",
        str(adb_server.port),
        "--base-port",
        str(base_port),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == f"127.0.0.1:{base_port}"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert adb_server.is_running()
    states = {info.serial: info.state for info in adb_server.client.list()}
    assert f"127.0.0.1:{base_port}" not in states  # disconnected on the way out


def test_unknown_profile_is_a_user_error_before_anything_starts():
    app = typer.Typer()
    app.command()(up_command)
    result = CliRunner().invoke(app, ["--profile", "warp-speed", "--adb-port", str(free_port())])
    assert isinstance(result.exception, UserError)
    assert "unknown latency profile" in result.exception.message and result.exception.hint
