"""Two `worker` processes on one PostgreSQL queue; one is killed with `kill -9` mid-run. The other takes over its
claimed tasks (and a restarted worker would too) without anyone running `batch --resume`: every task ends done,
exactly once, and the dead worker's episodes end as interrupted.

Server and private schema: the ``pg_url`` fixture of tests/conftest.py (skips, saying why, without a server)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from mobile_agent.farm.scheduler.jobs import outcome_failure
from mobile_agent.farm.scheduler.runs import submit
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store import queue_status as qs
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.store import TrajectoryStore

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

SCRIPT = """\
task: takeover drill
turns:
  - action: {kind: key, key: home}
  - action: {kind: key, key: home}
  - action: {kind: finish, text: done}
"""


def _worker(pg_url: str, inventory: Path, run_id: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "mobile_agent.cli.farm", "worker", "--db", pg_url, "--devices", str(inventory)]
        + ["--run", run_id, "--reset", "none", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )


def test_a_live_worker_takes_over_the_tasks_of_a_killed_one(pg_url: str, sim_farm, tmp_path: Path) -> None:
    farm = sim_farm(4)
    inventories = []
    for index, serials in enumerate((farm.serials[:2], farm.serials[2:])):
        path = tmp_path / f"host{index}.yaml"
        data = {
            "adb": f"127.0.0.1:{farm.adb_port}",
            "discover": False,
            "devices": [{"serial": s} for s in serials],
        }
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        inventories.append(path)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"task": f"takeover drill #{i}"}) + "\n" for i in range(16)), "utf-8")
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    env = {**os.environ, "MOBILE_AGENT_DATA": str(tmp_path / "shots")}

    with (
        TrajectoryStore.open(pg_url, root=tmp_path / "shots") as store,
        SimModelServer(family="ui-venus-2", scripts=[script], latency_ms=150) as model,
    ):
        run = submit(store, tasks, config={"base_url": [model.base_url], "model": model.served_model})
        victim = _worker(pg_url, inventories[0], run.id, env)
        survivor = _worker(pg_url, inventories[1], run.id, env)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                running = store.list_episodes(run_id=run.id, status=EpisodeStatus.RUNNING, limit=None)
                if any(e.meta.get("worker", "").split(":")[1] == str(victim.pid) for e in running):
                    break
                time.sleep(0.05)
            else:
                pytest.fail("the first worker started no episode")
            victim.send_signal(signal.SIGKILL)
            victim.wait(10)
            out, err = survivor.communicate(timeout=120)
            assert survivor.returncode == 0, err[-3000:]
        finally:
            for proc in (victim, survivor):
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()

        assert qs.run_counts(store, run.id) == qs.RunCounts(done=16)
        results: Counter[int] = Counter()
        for episode in store.list_episodes(run_id=run.id, limit=None):
            assert episode.status is EpisodeStatus.ENDED
            if outcome_failure(episode.outcome) is None:
                results[episode.meta["queue_task"]] += 1
        assert len(results) == 16 and set(results.values()) == {1}  # every task exactly once
        killed = [
            e
            for e in store.list_episodes(run_id=run.id, limit=None)
            if e.meta.get("worker", "").split(":")[1] == str(victim.pid) and e.outcome == "interrupted"
        ]
        assert killed  # the dead worker's episode in flight was ended, with the reason
        assert store.check_integrity() == []
