"""Safety in a batch on simulated phones: a WeChat send goes through with ``--allow send@com.tencent.mm`` (on
`batch`, or stored with the run by `submit` and applied by `worker`); without it the episodes pause as needs_user,
are recorded exactly once, wait for a person within the hold (one phone at most held, the other keeps working),
then end as needs_user:expired, and `batch --resume` queues them again."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner

from mobile_agent.sim.servers.model_server import SHIPPED_SCRIPTS, SimModelServer
from mobile_agent.store import pauses
from mobile_agent.store import queue_status as qs
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.store import TrajectoryStore

pytestmark = pytest.mark.slow

SEND = "给张三发微信说晚上好"
DRILL = "task: farm drill\nturns:\n  - action: {kind: finish, text: done}\n"


def mounted() -> typer.Typer:
    from mobile_agent.cli.farm_batch import batch_command, submit_command, worker_command
    from mobile_agent.cli.farm_devices import devices_app

    app = typer.Typer()
    app.add_typer(devices_app, name="devices")
    app.command("batch")(batch_command)
    app.command("submit")(submit_command)
    app.command("worker")(worker_command)
    return app


def write_devices(path: Path, farm, serials: list[str] | None = None) -> Path:
    data = {
        "adb": f"127.0.0.1:{farm.adb_port}",
        "discover": False,
        "devices": [{"serial": s} for s in serials or farm.serials],
    }
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def write_tasks(path: Path, sends: int, drills: int) -> Path:
    tasks = [
        {"task": SEND, "app": "微信", "reset": "force-stop", "repeats": sends, "priority": 10},
        {"task": "farm drill", "repeats": drills},
    ]
    path.write_text(
        yaml.safe_dump({"defaults": {"max_steps": 10}, "tasks": tasks}, allow_unicode=True), "utf-8"
    )
    return path


@pytest.fixture
def model(tmp_path: Path):
    (tmp_path / "drill.yaml").write_text(DRILL, encoding="utf-8")
    with SimModelServer(
        family="ui-venus-2", scripts=[SHIPPED_SCRIPTS / "wechat_send.yaml", tmp_path / "drill.yaml"]
    ) as server:
        yield server


def sent(farm) -> int:
    return sum(len(phone.state.messages_sent) for phone in farm.phones.values())


def invoke(*args: str, code: int = 0) -> dict:
    result = CliRunner().invoke(mounted(), [*args, "--json"])
    assert result.exit_code == code and result.stdout, result.output + repr(result.exception)
    return json.loads(result.stdout)


def test_an_allowed_send_finishes_in_batch_and_through_submit_and_worker(
    sim_farm, model, tmp_path: Path
) -> None:
    farm = sim_farm(2, scenario="wechat_send")
    devices = write_devices(tmp_path / "devices.yaml", farm)
    tasks = write_tasks(tmp_path / "tasks.yaml", sends=2, drills=2)
    common = ["--devices", str(devices), "--base-url", model.base_url]

    db = f"sqlite:///{tmp_path / 'batch.db'}"
    summary = invoke("batch", str(tasks), *common, "--db", db, "--allow", "send@com.tencent.mm")
    assert summary["by_outcome"] == {"finished": 4} and summary["waiting"] == []
    assert sent(farm) == 2

    db = f"sqlite:///{tmp_path / 'shared.db'}"
    run = invoke("submit", str(tasks), "--db", db, "--allow", "send@com.tencent.mm")
    invoke("worker", "--db", db, *common, "--run", run["run_id"])  # no safety options: the run's apply
    with TrajectoryStore.open(db) as store:
        assert {t.outcome for t in qs.list_tasks(store, run["run_id"])} == {"finished"}
        episodes = store.list_episodes(run_id=run["run_id"], limit=None)
        assert {e.meta["safety"] for e in episodes} == {"default=ask,send@com.tencent.mm=allow"}
    assert sent(farm) == 4


def test_without_the_allow_sends_wait_for_a_person_within_the_hold_then_expire(
    sim_farm, model, tmp_path: Path
) -> None:
    farm = sim_farm(2, scenario="wechat_send")
    devices = write_devices(tmp_path / "devices.yaml", farm)
    tasks = write_tasks(tmp_path / "tasks.yaml", sends=2, drills=3)
    db = f"sqlite:///{tmp_path / 'farm.db'}"
    common = ["--db", db, "--base-url", model.base_url, "--devices", str(devices)]

    # Both phones take a send first (priority); both pause. At most one phone is held for a person (25 % of two,
    # and never both): the other runs the drills. Nobody answers: the batch ends when the hold lapses (not at a
    # stall timeout), exit 1, the sends needs_user:expired (never a success), nothing sent.
    t0 = time.monotonic()
    ended = invoke("batch", str(tasks), *common, "--hold", "3", "--stall", "600", code=1)
    assert time.monotonic() - t0 < 120
    assert ended["by_outcome"] == {"needs_user:expired": 2, "finished": 3}
    assert ended["tasks"]["expired"] == 2 and ended["tasks"]["done"] == 3  # needing a person is never done
    assert ended["retries"] == 0 and ended["episodes"] == 5 and len(ended["expired"]) == 2
    assert ended["successes"] == 0 and ended["waiting"] == [] and sent(farm) == 0
    with TrajectoryStore.open(db) as store:
        drills = [
            e for e in store.list_episodes(run_id=ended["run_id"], limit=None) if e.id not in ended["expired"]
        ]
        held = [p for e in ended["expired"] for p in pauses.pauses(store, e)]
    assert len({e.device for e in drills}) >= 1 and all(p.status == "expired" for p in held)

    # --resume queues the expired tasks again: a fresh attempt each. An earlier attempt got as far as the send,
    # so the new one asks again before anything consequential (farm/scheduler/prior.py), and expires again.
    run_id = ended["run_id"]
    summary = invoke("batch", "--resume", run_id, *common, "--allow", "send@com.tencent.mm", code=1)
    assert summary["by_outcome"] == {"needs_user:expired": 2, "finished": 3}
    assert summary["retries"] == 2 and summary["episodes"] == 7 and sent(farm) == 0
    assert not set(summary["expired"]) & set(ended["expired"])  # the new attempts' episodes
    with TrajectoryStore.open(db) as store:
        episodes = store.list_episodes(run_id=run_id, limit=None)
        assert len(episodes) == 7 and all(e.status is EpisodeStatus.ENDED for e in episodes)


def test_a_batch_where_every_task_needs_a_person_lists_every_waiting_episode(
    sim_farm, model, tmp_path: Path
) -> None:
    farm = sim_farm(2, scenario="wechat_send")
    devices = write_devices(tmp_path / "devices.yaml", farm)
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text(
        yaml.safe_dump({"tasks": [{"task": SEND, "app": "微信", "repeats": 2}]}, allow_unicode=True)
    )
    db = f"sqlite:///{tmp_path / 'farm.db'}"
    args = ["batch", str(tasks), "--devices", str(devices), "--db", db, "--base-url", model.base_url]
    args += ["--hold", "2"]
    t0 = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "mobile_agent.cli.app", *args], capture_output=True, text=True, timeout=300
    )
    assert time.monotonic() - t0 < 120
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    assert out.count("mobile-agent inbox answer") >= 2  # each question with the command that answers it
    assert "waiting for a person" in out and "expired (nobody answered in time): 2" in out
    assert "0 with a result" in out and ", 2 expired;" in out  # the summary line counts the new task states
    assert "mobile-agent batch --resume" in out and sent(farm) == 0
