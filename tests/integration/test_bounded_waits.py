"""Every wait is bounded, and nothing starts an adb server: through the real stack (the adb server from the
adbutils wheel, adbutils, uiautomator2 and the OpenAI client against simulated phones and the simulated model).

The faults are real: a model endpoint that reads the request and never answers, one that sends its reply one byte
every 2 s (no read ever times out), a phone whose screenshots hang, an adb server killed mid-episode.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mobile_agent.actions import Outcome
from mobile_agent.agent.config import AgentConfig
from mobile_agent.agent.runtime import run_task
from mobile_agent.device.adb_server import AdbServerClient
from mobile_agent.errors import AdbServerUnreachable
from mobile_agent.sim.farm import AdbServer, SimFarm, bundled_adb_path, free_port
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store.store import TrajectoryStore

SCRIPTS = Path(__file__).parent / "wait_scripts"
SLACK_S = 5.0  # an overrunning step ends the episode within its timeout plus this
CLI = [sys.executable, "-m", "mobile_agent.cli.app"]


@pytest.fixture
def store(tmp_path):
    with TrajectoryStore.open(root=tmp_path / "replays") as s:
        yield s


@pytest.fixture
def model():
    with SimModelServer(family="ui-venus-2", scripts=[SCRIPTS], model_name="sim") as server:
        yield server


def _run(farm, server, store, task, config, **kw):
    return run_task(
        task,
        device=farm.serials[0],
        adb=f"127.0.0.1:{farm.adb_port}",
        base_url=server.base_url,
        model="sim",
        store=store,
        config=config,
        **kw,
    )


def _assert_timed_out(store, result, started: float, limit: float) -> None:
    elapsed = time.monotonic() - started
    assert result.outcome == Outcome.TIMEOUT, result.detail
    assert elapsed < limit + SLACK_S, f"took {elapsed:.1f} s for a limit of {limit:.0f} s"
    assert store.episode(result.episode_id).outcome == Outcome.TIMEOUT
    steps = store.steps(result.episode_id)
    assert steps[0].action is not None and steps[0].error_kind is None  # the launch, done before the fault
    last = steps[-1]  # the step that overran is written, marked, and did nothing on the phone
    assert last.index == len(steps) - 1 and last.error_kind == "timeout" and last.action is None
    assert "ran past" in (last.error_text or "")


@pytest.mark.parametrize("task", ["挂起测试：打开微信", "涓流测试：打开微信"], ids=["hang", "trickle"])
def test_a_hanging_or_trickling_endpoint_ends_the_episode_as_timeout(sim_farm, store, model, task):
    farm = sim_farm(1, scenario="wechat_send")
    started = time.monotonic()
    result = _run(farm, model, store, task, AgentConfig(timeout_s=6))
    _assert_timed_out(store, result, started, 6)
    assert store.steps(result.episode_id)[-1].screenshot_path  # the screen the model was asked about


def test_the_step_timeout_bounds_a_step_when_the_episode_has_time_left(sim_farm, store, model):
    farm = sim_farm(1, scenario="wechat_send")
    started = time.monotonic()
    result = _run(farm, model, store, "挂起测试：打开微信", AgentConfig(timeout_s=600, step_timeout_s=4))
    _assert_timed_out(store, result, started, 4 + 3)  # the first step's own time, then 4 s for the hung one
    assert "step limit of 4 s" in (result.detail or "")


@pytest.mark.parametrize("where", ["observe", "settle"])
def test_a_hanging_screenshot_ends_the_episode_as_timeout(sim_farm, store, model, where):
    """The next step's screenshot hangs (``observe``: the frame settling ended on is too old to reuse), or the
    frames taken to see the tap's effect do (``settle``: the tap was done, its row says so)."""
    farm = sim_farm(1, scenario="wechat_send")
    phone = farm.phones[farm.serials[0]]

    def hang_after_first_step(event) -> None:
        if event.index == 0:
            if where == "observe":
                time.sleep(1.2)
            phone.faults.screenshot_delay = 3600.0

    started = time.monotonic()
    try:
        result = _run(
            farm,
            model,
            store,
            "截图挂起测试：打开微信",
            AgentConfig(timeout_s=6),
            on_step=hang_after_first_step,
        )
    finally:
        phone.faults.screenshot_delay = 0.0  # frees the phone's hung handler
    assert "on phone" in (result.detail or "")
    if where == "observe":
        _assert_timed_out(store, result, started, 6)
        assert store.steps(result.episode_id)[-1].screenshot_path is None  # the phone never sent it
        return
    assert result.outcome == Outcome.TIMEOUT and time.monotonic() - started < 6 + SLACK_S
    last = store.steps(result.episode_id)[-1]
    assert last.action is not None and last.status == "failed" and "ran past" in last.error_text


@pytest.mark.slow
def test_cli_run_with_timeout_30_ends_within_35_s_on_a_trickling_endpoint(sim_farm, model, tmp_path):
    farm = sim_farm(1, scenario="wechat_send")
    db = f"sqlite:///{tmp_path / 'store.db'}"
    started = time.monotonic()
    done = subprocess.run(
        [*CLI, "run", "涓流测试：打开微信", "--timeout", "30", "--non-interactive"]
        + ["--device", farm.serials[0], "--adb", f"127.0.0.1:{farm.adb_port}"]
        + ["--base-url", model.base_url, "--model", "sim", "--db", db],
        capture_output=True,
        text=True,
        timeout=90,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 1, done.stdout + done.stderr
    assert "timeout" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    with TrajectoryStore.open(db) as store:
        (episode,) = store.list_episodes()
        assert episode.outcome == Outcome.TIMEOUT
        assert store.steps(episode.id)[-1].error_kind == "timeout"
        took = (episode.ended_at - episode.started_at).total_seconds()
    assert took < 30 + SLACK_S, f"the episode took {took:.1f} s"
    # The process also starts Python, the store and the phone's u2 before the episode's clock starts.
    assert elapsed < 30 + SLACK_S + 15, f"`run --timeout 30` took {elapsed:.1f} s (the episode {took:.1f} s)"


# ----- adb: never started by the runtime ------------------------------------------------------------------------


def _adb_processes() -> dict[int, str]:
    """pid -> command line of every adb process on the machine."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() != "adb":
                continue
            out[int(entry.name)] = (
                (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            )
        except OSError:
            continue
    return out


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


@pytest.fixture
def adb_watch(monkeypatch):
    """Points a stray `adb start-server` at a trap port, and afterwards names every adb server that appeared on
    5037, the trap port or a port the test names (other engineers' test servers elsewhere are left out of it)."""
    trap = free_port()
    monkeypatch.setenv("ADBUTILS_ADB_PATH", bundled_adb_path())
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(trap))
    before = set(_adb_processes())
    default_was_up = _listening(5037)
    watched = {5037, trap}

    def new_servers(*ports: int) -> list[str]:
        watched.update(ports)
        appeared = {p: c for p, c in _adb_processes().items() if p not in before}
        ours = [
            f"{pid}: {cmd}"
            for pid, cmd in appeared.items()
            if any(f"tcp:{port}" in cmd or f"-P {port}" in cmd for port in watched)
        ]
        if not default_was_up and _listening(5037):
            ours.append("something listens on 5037")
        return ours

    yield new_servers
    for pid, cmd in _adb_processes().items():  # a server this test caused (a failing run) is not left behind
        if pid not in before and any(f"tcp:{port}" in cmd for port in watched if port != 5037):
            os.kill(pid, 9)


def test_the_adb_server_killed_mid_episode_ends_it_as_error_adb_and_starts_nothing(store, model, adb_watch):
    server = AdbServer(free_port()).ensure_running()  # this test's own server: the one it kills
    farm = SimFarm(1, adb_port=server.port, scenario="wechat_send")
    try:
        farm.start()

        def kill_during_the_next_model_request(event) -> None:
            if event.index == 0:
                threading.Timer(0.5, server.stop).start()

        result = _run(
            farm,
            model,
            store,
            "断开测试：打开微信",
            AgentConfig(timeout_s=60),
            on_step=kill_during_the_next_model_request,
        )
    finally:
        farm.stop()
        server.stop()
    assert result.outcome == "error:adb", result.detail
    assert f"adb -P {server.port} start-server" in (result.detail or "")
    steps = store.steps(result.episode_id)
    assert steps and steps[0].action is not None and steps[0].error_kind is None
    assert store.episode(result.episode_id).outcome == "error:adb"
    time.sleep(0.5)  # a server that adbutils would start forks off within this
    assert adb_watch(server.port) == []
    assert not _listening(server.port)


def test_a_client_for_a_dead_server_raises_with_the_hint_and_starts_nothing(adb_watch):
    port = free_port()
    client = AdbServerClient("127.0.0.1", port)
    with pytest.raises(AdbServerUnreachable) as err:
        client.list()
    assert f"adb -P {port} start-server" in err.value.hint
    with pytest.raises(AdbServerUnreachable):
        client.device("emulator-5554").shell(["echo", "hi"])
    time.sleep(0.5)
    assert adb_watch(port) == []


def test_devices_reports_an_unreachable_listed_server_and_starts_nothing(tmp_path, adb_watch):
    dead_default, dead_remote = free_port(), free_port()
    inventory = tmp_path / "devices.yaml"
    inventory.write_text(
        f"adb: 127.0.0.1:{dead_default}\ndiscover: true\ndevices:\n"
        f"  - serial: 192.168.1.20:5555\n    adb: 127.0.0.1:{dead_remote}\n  - serial: a3f9c2d1\n"
    )
    env = {**os.environ, "HOME": str(tmp_path), "COLUMNS": "200"}
    env.pop("MOBILE_AGENT_DB", None)
    done = subprocess.run(
        [*CLI, "devices", "--devices", str(inventory), "--json", "--no-probe"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    states = {row["serial"]: row["state"] for row in json.loads(done.stdout)}
    assert states == {"192.168.1.20:5555": "unreachable", "a3f9c2d1": "unreachable"}
    time.sleep(0.5)
    assert adb_watch(dead_default, dead_remote) == []
