"""Nothing lost when `mobile-agent run` dies: the real CLI process on simulated phones and the simulated model.

- `kill -9` at 20 moments (the test hook MOBILE_AGENT_TEST_CRASH_AT stops it between the intent, the act and the
  record of a step; the rest at random delays from outside): the next command ends the episode as interrupted,
  and every message the phone really sent has its step in the store (as intent or done);
- SIGTERM and SIGHUP are handled like Ctrl-C: the episode ends interrupted, recorded, the phone's lease released;
- two runs on one phone: the second refuses (exit 2, naming the holder); a dead holder's lease is taken over.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path

import pytest

from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store import phones as phone_db
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.store import TrajectoryStore

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "mobile_agent.cli.app"]
SEND = "给张三发微信说晚上好"


def _run_args(farm, serial: str, server: SimModelServer, db: str, *extra: str) -> list[str]:
    return [
        *CLI,
        "run",
        SEND,
        "--device",
        serial,
        "--adb",
        f"127.0.0.1:{farm.adb_port}",
        "--base-url",
        server.base_url,
        "--model",
        server.model_name,
        "--db",
        db,
        "--non-interactive",
        "--allow",
        "send@com.tencent.mm",
        *extra,
    ]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MOBILE_AGENT_DB"}
    env.update(HOME=str(tmp_path), COLUMNS="200", **extra)
    return env


def _start(args: list[str], tmp_path: Path, env: dict[str, str] | None = None, **popen) -> subprocess.Popen:
    """A command in the background, in `tmp_path`, with nothing on stdin."""
    env = _env(tmp_path) if env is None else env
    return subprocess.Popen(args, stdin=subprocess.DEVNULL, env=env, cwd=tmp_path, **popen)


def _complete(args: list[str], tmp_path: Path, timeout: float) -> subprocess.CompletedProcess:
    """A command run to its end in `tmp_path`, its output captured as text."""
    return subprocess.run(
        args,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_env(tmp_path),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )


def _kill_if_running(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


@pytest.fixture
def slow_send(sim_farm, tmp_path: Path) -> Iterator[tuple[list[str], str]]:
    """(`run`'s command line, its store URL): the send task on one phone, a model that takes 2.5 s a reply."""
    farm = sim_farm(1, scenario="wechat_send")
    db = f"sqlite:///{tmp_path / 'replays' / 'mobile_agent.db'}"
    with SimModelServer(family="ui-venus-2", model_name="sim", latency_ms=2500) as server:
        yield _run_args(farm, farm.serials[0], server, db), db


def _sent(farm, serial: str) -> list[str]:
    return [m["text"] for m in farm.phones[serial].state.messages_sent]


def _send_steps(store: TrajectoryStore, episode_id: str) -> list:
    """Steps whose action the safety gate saw as a send (allowed by --allow send@...)."""
    return [
        s
        for s in store.steps(episode_id)
        if any(d.get("guard") == "safety" and d.get("kind") == "send" for d in s.guard_decisions)
    ]


def test_kill_9_at_20_moments_leaves_nothing_running_and_every_send_recorded(
    sim_farm, tmp_path: Path
) -> None:
    points = [
        f"{point}:{step}" for point in ("after_intent", "after_act", "after_record") for step in range(5)
    ]
    rng = random.Random(15)
    delays = [rng.uniform(2.0, 5.0) for _ in range(20 - len(points))]
    moments: list[tuple[str | None, float | None]] = [(p, None) for p in points] + [(None, d) for d in delays]
    farm = sim_farm(len(moments), scenario="wechat_send")
    db = f"sqlite:///{tmp_path / 'replays' / 'mobile_agent.db'}"

    with SimModelServer(family="ui-venus-2", model_name="sim") as server:

        def one(index: int) -> tuple[int, int]:
            point, delay = moments[index]
            serial = farm.serials[index]
            env = _env(tmp_path, **({"MOBILE_AGENT_TEST_CRASH_AT": point} if point else {}))
            proc = _start(
                _run_args(farm, serial, server, db),
                tmp_path,
                env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            try:
                proc.wait(timeout=delay if delay is not None else 60)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
                proc.wait(10)
            proc.stderr.close()
            return index, proc.returncode

        with ThreadPoolExecutor(max_workers=2) as pool:
            codes = dict(pool.map(one, range(len(moments))))

    # Each crash point really killed its run (delays may let a quick run finish first: also fine).
    assert all(codes[i] == -signal.SIGKILL for i, (p, _) in enumerate(moments) if p), codes

    after = _complete([*CLI, "episodes", "--db", db, "--limit", "50"], tmp_path, timeout=60)
    assert after.returncode == 0, after.stderr
    with TrajectoryStore.open(db) as store:
        episodes = store.list_episodes(limit=None)
        assert episodes and not [e.id for e in episodes if e.status is EpisodeStatus.RUNNING]
        by_device = {e.device: e for e in episodes}
        for index, (point, _delay) in enumerate(moments):
            serial = farm.serials[index]
            sent = _sent(farm, serial)
            episode = by_device.get(serial)
            if episode is None:  # killed before the episode began: nothing may have happened
                assert sent == [], (point, serial)
                continue
            sends = _send_steps(store, episode.id)
            assert len(sent) <= len(sends), (point, sent, [s.status for s in sends])
            for step in sends:  # a send recorded done really happened; one left as intent may or may not have
                assert step.status in ("intent", "done", "failed")
                if step.status == "done":
                    assert sent == ["晚上好"]
            if point and point.startswith("after_act"):
                steps = store.steps(episode.id)
                assert steps[-1].status == "intent", (
                    point
                )  # acted, killed before it said so: "may have happened"
            if (
                point == "after_act:4"
            ):  # the send tap happened and the process died before recording how it went
                assert sent == ["晚上好"] and sends and sends[-1].status == "intent"
            if episode.outcome == "interrupted":
                assert "is gone" in (episode.outcome_detail or "")
        assert store.check_integrity() == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_end_the_run_like_ctrl_c(slow_send, tmp_path: Path, signum: int) -> None:
    run, db = slow_send
    proc = _start(run, tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_a_step(db, timeout=30)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=30)
    finally:
        _kill_if_running(proc)
    assert proc.returncode == 130, out + err
    assert "Traceback" not in err
    with TrajectoryStore.open(db) as store:
        (episode,) = store.list_episodes()
        assert episode.status is EpisodeStatus.ENDED and episode.outcome == "interrupted"
        assert all(s.status in ("done", "failed") for s in store.steps(episode.id))  # the act was let finish
        assert not any(info.busy() for info in phone_db.farm_devices(store))  # the phone was released


def _wait_for_a_step(db: str, timeout: float) -> None:
    """Until the run has recorded a step, read through a read-only SQLite connection: opening the store here would
    create and migrate it, taking the write lock while the run creates the same file."""
    deadline = time.monotonic() + timeout
    path = Path(db.removeprefix("sqlite:///"))
    while time.monotonic() < deadline:
        if path.exists():
            try:
                with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)) as conn:
                    if conn.execute("SELECT count(*) FROM steps").fetchone()[0] >= 1:
                        return
            except sqlite3.Error:  # the run is creating the tables this very moment: look again
                pass
        time.sleep(0.1)
    pytest.fail("the run recorded no step")


def test_a_second_run_on_a_busy_phone_refuses_and_a_dead_holder_is_taken_over(
    slow_send, tmp_path: Path
) -> None:
    run, db = slow_send
    first = _start(run, tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for_a_step(db, timeout=30)
        second = _complete(run, tmp_path, timeout=60)
        assert second.returncode == 2, second.stdout + second.stderr
        error = [line for line in second.stderr.splitlines() if line.startswith("error:")]
        assert len(error) == 1 and f"pid {first.pid}" in error[0] and "episode" in error[0], second.stderr
        assert "since" in error[0] and "--force" in second.stderr
        assert "Traceback" not in second.stderr
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    finally:
        _kill_if_running(first)
    # The holder is dead: its lease is taken over without --force, and the run goes to its end.
    third = _complete(run, tmp_path, timeout=90)
    assert third.returncode in (0, 1), third.stderr
    assert "taking over phone" in third.stderr
    with TrajectoryStore.open(db) as store:
        outcomes = sorted(str(e.outcome) for e in store.list_episodes())
        assert len(outcomes) == 2 and "interrupted" in outcomes
