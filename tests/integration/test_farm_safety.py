"""Safety in a batch on simulated phones: a WeChat send goes through with ``--allow send@com.tencent.mm`` (on
`batch`, or stored with the run by `submit` and applied by `worker`); without it the episodes pause as needs_user,
are recorded exactly once, and the phones they paused on get no further task while they are reserved (`devices`
shows them as reserved), then come back when the reservation lapses."""

from __future__ import annotations

import json
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


def test_without_the_allow_sends_pause_and_their_phones_are_held(sim_farm, model, tmp_path: Path) -> None:
    farm = sim_farm(3, scenario="wechat_send")
    two_phones = write_devices(tmp_path / "two.yaml", farm, farm.serials[:2])
    all_phones = write_devices(tmp_path / "devices.yaml", farm)
    tasks = write_tasks(tmp_path / "tasks.yaml", sends=2, drills=3)
    db = f"sqlite:///{tmp_path / 'farm.db'}"
    common = ["--db", db, "--base-url", model.base_url]

    # Both phones take a send first (priority); both pause; nobody is left to run the drills: the batch stops
    # (stalled) instead of waiting for people, with the drills still pending.
    stalled = invoke("batch", str(tasks), "--devices", str(two_phones), *common, "--stall", "1", code=1)
    assert stalled["by_outcome"] == {"needs_user": 2, "pending": 3}
    assert stalled["retries"] == 0 and stalled["episodes"] == 2 and len(stalled["waiting"]) == 2
    assert stalled["successes"] == 0 and sent(farm) == 0

    listed = invoke("devices", "--devices", str(all_phones), "--db", db, "--no-probe")
    states = {row["serial"]: row for row in listed}
    with TrajectoryStore.open(db) as store:
        held = {pauses.open_pause(store, e).device: e for e in stalled["waiting"]}
    assert sorted(held) == sorted(farm.serials[:2])
    for serial, episode_id in held.items():
        assert states[serial]["state"] == "reserved" and states[serial]["reserved_by"] == episode_id
    assert states[farm.serials[2]]["state"] == "online" and states[farm.serials[2]]["reserved_by"] is None

    # With a third phone the run finishes there; the held phones get nothing, the paused sends are not rerun.
    run_id = stalled["run_id"]
    summary = invoke("batch", "--resume", run_id, "--devices", str(all_phones), "--db", db)
    assert summary["by_outcome"] == {"needs_user": 2, "finished": 3}
    assert summary["retries"] == 0 and summary["episodes"] == 5 and summary["successes"] == 0
    assert sorted(summary["waiting"]) == sorted(stalled["waiting"])
    with TrajectoryStore.open(db) as store:
        episodes = store.list_episodes(run_id=run_id, limit=None)
        assert all(e.status is EpisodeStatus.ENDED for e in episodes)
        assert {e.device for e in episodes if e.id not in held.values()} == {farm.serials[2]}


def test_a_phone_comes_back_after_a_short_reservation(sim_farm, model, tmp_path: Path) -> None:
    farm = sim_farm(1, scenario="wechat_send")
    devices = write_devices(tmp_path / "devices.yaml", farm)
    tasks = write_tasks(tmp_path / "tasks.yaml", sends=1, drills=2)
    db = f"sqlite:///{tmp_path / 'farm.db'}"
    summary = invoke(
        "batch",
        str(tasks),
        "--devices",
        str(devices),
        "--db",
        db,
        "--base-url",
        model.base_url,
        "--reserve",
        "1",
    )
    assert summary["by_outcome"] == {"needs_user": 1, "finished": 2}
    with TrajectoryStore.open(db) as store:
        [episode_id] = summary["waiting"]
        pause = pauses.open_pause(store, episode_id)
        drills = [e for e in store.list_episodes(run_id=summary["run_id"], limit=None) if e.id != episode_id]
        assert len(drills) == 2 and all(e.started_at >= pause.reserved_until for e in drills)
