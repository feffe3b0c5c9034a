"""A task that is wrong (here: a family that does not exist, queued before validation existed or by hand) is that
task's error:config, once: never an infrastructure failure, never retried on another phone, never a reason to
quarantine the phone, which goes on to serve the next tasks."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import yaml

from mobile_agent.farm.inventory import discover, load_inventory
from mobile_agent.farm.scheduler.jobs import SchedulerConfig
from mobile_agent.farm.scheduler.pool import WorkerPool
from mobile_agent.farm.scheduler.runner import AgentRunner, EpisodeDefaults, ModelSettings
from mobile_agent.farm.tasks import ResetMode
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store import phones as phone_db
from mobile_agent.store import queue as q
from mobile_agent.store import queue_status as qs
from mobile_agent.store.store import TrajectoryStore

pytestmark = pytest.mark.slow

SCRIPT = """\
task: config drill
turns:
  - action: {kind: key, key: home}
  - action: {kind: finish, text: done}
"""


def test_a_wrong_task_is_its_own_error_and_the_phone_keeps_serving(sim_farm, tmp_path: Path) -> None:
    farm = sim_farm(1)
    devices = tmp_path / "devices.yaml"
    devices.write_text(
        yaml.safe_dump(
            {"adb": f"127.0.0.1:{farm.adb_port}", "discover": False, "devices": [{"serial": farm.serials[0]}]}
        ),
        encoding="utf-8",
    )
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    rows = [
        q.NewTask(
            seq=0, label="t:1", task="config drill", spec={"task": "config drill", "family": "ui-tars-1.5"}
        ),
        q.NewTask(
            seq=1, label="t:2", task="config drill", spec={"task": "config drill", "family": "ui-tars-1.5"}
        ),
        q.NewTask(seq=2, label="t:3", task="config drill", spec={"task": "config drill"}),
    ]
    config = SchedulerConfig(poll_s=0.05, heartbeat_s=1, quarantine_after=1, probe_every_s=300, stall_s=10)
    with (
        TrajectoryStore.open(root=tmp_path / "replays") as store,
        SimModelServer(family="ui-venus-2", scripts=[script]) as server,
    ):
        run = store.create_run("config drill", {})
        q.enqueue_tasks(store, run.id, rows)
        model = ModelSettings((server.base_url,), server.served_model, max_retries=1, backoff_s=0.05)
        runner = AgentRunner(
            store, model, defaults=EpisodeDefaults(max_steps=5, timeout_s=60, reset=ResetMode.NONE)
        )
        pool = WorkerPool(store, discover(load_inventory(devices)), runner, config=config, run_ids=[run.id])
        worker = threading.Thread(target=pool.run)
        worker.start()
        worker.join(120)
        runner.close()
        assert not worker.is_alive(), "the batch did not finish"

        tasks = {t.seq: t for t in qs.list_tasks(store, run.id)}
        for seq in (0, 1):
            assert tasks[seq].outcome == "error:config" and tasks[seq].attempts == 1, tasks[seq]
            assert tasks[seq].device_failures == 0
        assert tasks[2].outcome == "finished"
        assert not any(info.quarantined for info in phone_db.farm_devices(store))
        assert all(a.failure is None for a in qs.list_attempts(store, run.id))
