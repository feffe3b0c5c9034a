"""The commands as a user runs them: separate processes for the phones, the model and the agent."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mobile_agent.sim.farm import free_port, free_port_block

CLI = [sys.executable, "-m", "mobile_agent.cli.app"]


def _ports(phones: int) -> tuple[int, int]:
    """(adb port, base port) with base..base+phones-1 free and apart from the adb port."""
    while True:
        base, adb = free_port_block(phones), free_port()
        if not base <= adb < base + phones:
            return adb, base


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("MOBILE_AGENT_DB", None)
    env["COLUMNS"] = "200"
    env["HOME"] = str(tmp_path)
    return env


def _cli(args, tmp_path, timeout=120, **kw):
    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=tmp_path,
        env=_env(tmp_path),
        stdin=subprocess.DEVNULL,
        **kw,
    )


@pytest.fixture
def sim_processes(tmp_path):
    """`mobile-agent sim up` and `mobile-agent sim model` as background processes; stopped at teardown."""
    (adb_port, base_port), model_port = _ports(1), free_port()
    up = subprocess.Popen(
        [
            *CLI,
            "sim",
            "up",
            "--phones",
            "1",
            "--adb-port",
            str(adb_port),
            "--base-port",
            str(base_port),
            "--scenario",
            "wechat_send",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
    )
    model = subprocess.Popen(
        [*CLI, "sim", "model", "--port", str(model_port), "--family", "autoglm"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
    )
    try:
        serial = up.stdout.readline().strip()
        assert serial, up.stderr.read()
        banner = model.stdout.readline()
        assert "http://127.0.0.1" in banner, model.stderr.read()
        yield {
            "adb": f"127.0.0.1:{adb_port}",
            "serial": serial,
            "base_url": f"http://127.0.0.1:{model_port}/v1",
        }
    finally:
        for proc in (model, up):
            proc.send_signal(signal.SIGINT)
        for proc in (model, up):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_run_against_separate_sim_processes(sim_processes, tmp_path):
    p = sim_processes
    result = _cli(
        [
            "run",
            "给张三发微信说晚上好",
            "--adb",
            p["adb"],
            "--base-url",
            p["base_url"],
            "--family",
            "autoglm",
            "--model",
            "autoglm",
            "--non-interactive",
            "--allow",
            "send@com.tencent.mm",
        ],
        tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "outcome: finished" in result.stdout
    assert (tmp_path / "replays" / "mobile_agent.db").exists()

    episode_id = re.search(r"\(episode ([0-9a-f]+)\)", result.stdout).group(1)
    listed = _cli(["episodes"], tmp_path)
    assert listed.returncode == 0 and "给张三发微信说晚上好" in listed.stdout and episode_id in listed.stdout
    shown = _cli(["show", episode_id[:6]], tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "launch" in shown.stdout and "finish" in shown.stdout

    doctor = _cli(
        [
            "doctor",
            "--adb",
            p["adb"],
            "--base-url",
            p["base_url"],
            "--family",
            "autoglm",
            "--model",
            "autoglm",
        ],
        tmp_path,
    )
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "✗" not in doctor.stdout


def test_run_with_several_phones_and_no_device_asks_to_choose(tmp_path):
    adb_port, base_port = _ports(2)
    up = subprocess.Popen(
        [*CLI, "sim", "up", "--phones", "2", "--adb-port", str(adb_port), "--base-port", str(base_port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
    )
    try:
        serials = [up.stdout.readline().strip() for _ in range(2)]
        assert all(serials)
        result = _cli(
            ["run", "打开设置", "--adb", f"127.0.0.1:{adb_port}", "--base-url", "http://127.0.0.1:9/v1"],
            tmp_path,
        )
        assert result.returncode == 2
        assert "2 phones are attached" in result.stderr and "--device" in result.stderr
        assert "Traceback" not in result.stderr
    finally:
        up.send_signal(signal.SIGINT)
        up.wait(timeout=20)


@pytest.mark.parametrize(
    "args, expected",
    [
        (["run", "x", "--adb", "nonsense:port"], "bad adb server address"),
        (["run", "x", "--max-steps", "0"], "max-steps"),
        (["run", "x", "--family", "gpt-9", "--adb", "127.0.0.1:9"], "model family"),
        (["show", "doesnotexist"], "episode"),
        (["sim", "up", "--profile", "warp"], "profile"),
        (["demo", "--scenario", "no_such_scenario"], "scenario"),
        (["frobnicate"], "No such command"),
    ],
)
def test_user_errors_are_one_line_with_exit_2(args, expected, tmp_path):
    result = _cli(args, tmp_path, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert expected.lower() in result.stderr.lower()
    assert result.stderr.strip().splitlines()[0].startswith("error:")


def _listening(port: int) -> bool:
    import socket

    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


def test_unreachable_adb_server_is_a_clear_error(tmp_path):
    port = free_port()
    default_server_before = _listening(5037)
    result = _cli(["run", "打开设置", "--adb", f"127.0.0.1:{port}"], tmp_path, timeout=60)
    assert result.returncode == 2
    assert "adb server" in result.stderr and "hint" in result.stderr
    assert "Traceback" not in result.stderr
    # adbutils would start a server on 5037 when the one asked for is down; we must not.
    assert _listening(5037) == default_server_before
    assert not _listening(port)


def test_demo_from_a_clean_directory(tmp_path):
    started = time.monotonic()
    result = _cli(["demo"], tmp_path, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "outcome: finished" in result.stdout
    assert "simulated phone's check: ok" in result.stdout
    assert time.monotonic() - started < 180


def test_unattended_send_pauses_and_resume_continues_the_same_episode(sim_processes, tmp_path):
    p = sim_processes
    common = ["--adb", p["adb"], "--base-url", p["base_url"], "--family", "autoglm", "--model", "autoglm"]
    paused = _cli(["run", "给张三发微信说晚上好", *common, "--non-interactive"], tmp_path)
    assert paused.returncode == 1, paused.stdout + paused.stderr
    assert "outcome: needs_user" in paused.stdout and "SEND" in paused.stdout
    episode_id = re.search(r"\(episode ([0-9a-f]+)\)", paused.stdout).group(1)

    resumed = _cli(["resume", episode_id[:8], "--reply", "yes", "--non-interactive"], tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "finished" in resumed.stdout and episode_id in resumed.stdout

    shown = _cli(["show", episode_id], tmp_path)
    assert "human" in shown.stdout  # the approved send is recorded as the person's step
    again = _cli(["resume", episode_id, "--reply", "yes", "--non-interactive"], tmp_path)
    assert again.returncode == 2 and "Traceback" not in again.stderr
