"""`batch` end to end: 100 tasks over 16 simulated phones and the simulated model, run as a user runs it (a
separate process against phones served by this one); every task gets exactly one episode with a result.

Also the farm's own commands on the same kind of phones: devices, devices check --prepare, runs, runs show,
mounted on a throwaway Typer app the way mobile_agent.cli.app mounts them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner

from mobile_agent.farm.scheduler.jobs import outcome_failure
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store import phones as phone_db
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.store import TrajectoryStore

pytestmark = pytest.mark.slow

SCRIPTS = """\
task: farm drill
turns:
  - action: {kind: finish, text: done}
"""
SCRIPTS_TWO_STEPS = """\
task: farm drill home
turns:
  - action: {kind: key, key: home}
  - action: {kind: finish, text: done}
"""


def write_devices(path: Path, farm, **extra) -> Path:
    data = {
        "adb": f"127.0.0.1:{farm.adb_port}",
        "discover": False,
        "devices": [{"serial": s, "tags": {"vendor": "sim", "slot": i}} for i, s in enumerate(farm.serials)],
        **extra,
    }
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def model_server(tmp_path: Path, **kw) -> SimModelServer:
    (tmp_path / "scripts").mkdir(exist_ok=True)
    (tmp_path / "scripts" / "one.yaml").write_text(SCRIPTS, encoding="utf-8")
    (tmp_path / "scripts" / "two.yaml").write_text(SCRIPTS_TWO_STEPS, encoding="utf-8")
    return SimModelServer(family="ui-venus-2", scripts=[tmp_path / "scripts"], **kw)


def farm_cli(
    *args: str, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mobile_agent.cli.farm", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **env} if env else None,
    )


def result_episodes(store: TrajectoryStore, run_id: str) -> Counter[int]:
    """queue task id -> number of episodes that ended with a result (must be 1 for each task)."""
    counts: Counter[int] = Counter()
    for episode in store.list_episodes(run_id=run_id, limit=None):
        if episode.outcome is not None and outcome_failure(episode.outcome) is None:
            counts[episode.meta["queue_task"]] += 1
    return counts


def test_batch_of_100_tasks_on_16_phones(sim_farm, tmp_path: Path) -> None:
    farm = sim_farm(16)
    devices = write_devices(tmp_path / "devices.yaml", farm)
    tasks = tmp_path / "tasks.yaml"
    entries = [
        {"task": f"farm drill {'home ' if i % 4 == 0 else ''}#{i}", "app": "微信" if i % 2 else "设置"}
        for i in range(100)
    ]
    tasks.write_text(
        yaml.safe_dump({"defaults": {"max_steps": 5}, "tasks": entries}, allow_unicode=True), "utf-8"
    )
    db = f"sqlite:///{tmp_path / 'replays' / 'farm.db'}"
    with model_server(tmp_path) as server:
        done = farm_cli(
            *("batch", str(tasks), "--devices", str(devices), "--db", db, "--base-url", server.base_url),
            *("--reset", "none", "--json"),
        )
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    tasks = {"total": 100, "pending": 0, "claimed": 0, "done": 100, "failed": 0, "waiting": 0, "expired": 0}
    assert summary["tasks"] == tasks
    assert summary["by_outcome"] == {"finished": 100}
    assert summary["finished_unverified"] == 100 and summary["retries"] == 0

    with TrajectoryStore.open(db) as store:
        run_id = summary["run_id"]
        per_task = result_episodes(store, run_id)
        assert len(per_task) == 100 and set(per_task.values()) == {1}
        episodes = store.list_episodes(run_id=run_id, limit=None)
        assert len(episodes) == 100 and all(e.status is EpisodeStatus.ENDED for e in episodes)
        steps = Counter(e.step_count for e in episodes)
        assert steps == {1: 75, 2: 25}
        assert len({e.device for e in episodes}) >= 12  # spread over the farm
        assert store.check_integrity() == []
        assert all(not info.busy() for info in phone_db.farm_devices(store))


def mounted() -> typer.Typer:
    from mobile_agent.cli.farm_batch import batch_command
    from mobile_agent.cli.farm_devices import devices_app
    from mobile_agent.cli.farm_runs import runs_app

    app = typer.Typer()
    app.add_typer(devices_app, name="devices")
    app.add_typer(runs_app, name="runs")
    app.command("batch")(batch_command)
    return app


def test_devices_and_runs_commands(sim_farm, tmp_path: Path) -> None:
    farm = sim_farm(2)
    locked = farm.serials[1]
    phone = farm.phones[locked]
    phone.key("power")  # screen off and locked
    devices = write_devices(tmp_path / "devices.yaml", farm)
    runner = CliRunner()
    app = mounted()

    listed = runner.invoke(app, ["devices", "--devices", str(devices), "--json"])
    assert listed.exit_code == 0, listed.output
    rows = {r["serial"]: r for r in json.loads(listed.stdout)}
    assert rows[farm.serials[0]]["state"] == "online" and rows[farm.serials[0]]["u2"] is True
    assert rows[farm.serials[0]]["model"] == "SimPhone" and rows[farm.serials[0]]["battery"] == 87
    assert rows[locked]["screen"] == "off" and "vendor:sim" in rows[locked]["tags"]

    checked = runner.invoke(app, ["devices", "check", "--devices", str(devices), "--json"])
    assert checked.exit_code == 1  # the locked phone is not ready
    reports = {r["serial"]: r for r in json.loads(checked.stdout)}
    assert reports[farm.serials[0]]["ok"] and not reports[locked]["ok"]
    screen = next(c for c in reports[locked]["checks"] if c["name"] == "screen")
    assert screen["status"] == "fail" and "off" in screen["detail"]

    prepared = runner.invoke(
        app, ["devices", "check", "--devices", str(devices), "--prepare", "-d", locked, "--json"]
    )
    assert prepared.exit_code == 0, prepared.output
    [report] = json.loads(prepared.stdout)
    assert report["ok"] and "dismissed the keyguard" in report["prepared"]
    assert phone.screen_on and not phone.locked

    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"task": f"farm drill {i}"}) + "\n" for i in range(4)), "utf-8")
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    with model_server(tmp_path, latency_ms=150) as server:
        batch = runner.invoke(
            app,
            ["batch", str(tasks), "--devices", str(devices), "--db", db, "--base-url", server.base_url]
            + ["-q", "--max-in-flight", "1"],
        )
        peak = server.peak_in_flight
    assert batch.exit_code == 0, batch.output
    assert "finished (unverified): 4" in batch.output
    assert peak == 1  # two phones, but one model request at a time (the global cap)

    runs = runner.invoke(app, ["runs", "--db", db, "--json"])
    [run] = json.loads(runs.stdout)
    assert run["tasks"] == 4 and run["done"] == 4 and run["status"] == "ended"
    shown = runner.invoke(app, ["runs", "show", run["run_id"][:6], "--db", db, "--json"])
    data = json.loads(shown.stdout)
    assert [t["state"] for t in data["task_list"]] == ["done"] * 4
    assert sum(sum(v.values()) for v in data["by_phone"].values()) == 4

    missing = runner.invoke(
        app, ["batch", str(tmp_path / "nope.yaml"), "--devices", str(devices), "--db", db]
    )
    assert missing.exit_code != 0 and "not found" in str(missing.exception)


def test_batch_names_the_requires_no_phone_meets(sim_farm, tmp_path: Path) -> None:
    """Tasks whose `requires:` no phone has: the batch says so when it sees them (a line) and in its summary, with
    the phones' tags, instead of only running out its --stall time with them pending."""
    farm = sim_farm(2)
    devices = write_devices(tmp_path / "devices.yaml", farm)
    tasks = tmp_path / "tasks.yaml"
    entries = [
        {"task": "farm drill #1", "app": "设置"},
        {"task": "farm drill #2", "app": "微信", "repeats": 2, "requires": {"accounts": ["wechat"]}},
    ]
    tasks.write_text(yaml.safe_dump({"tasks": entries}, allow_unicode=True), "utf-8")
    db = f"sqlite:///{tmp_path / 'farm.db'}"
    common = ("--devices", str(devices), "--db", db, "--reset", "none", "--stall", "1")
    with model_server(tmp_path) as server:
        plain = farm_cli("batch", str(tasks), *common, "--base-url", server.base_url)
        as_json = farm_cli("batch", str(tasks), *common, "--base-url", server.base_url, "--json")
    assert plain.returncode == 1, plain.stderr[-3000:]
    out = " ".join(plain.stdout.split())  # rich wraps long lines
    live = "no phone can take: 2 task(s) require accounts:wechat: no phone has accounts:wechat"
    assert live in out, out
    # the phones' tags: declared and discovered (android:, model:)
    assert f"{farm.serials[0]}: android:13, model:simphone, slot:0, vendor:sim" in out
    assert "no phone can take 2 task(s): requires accounts:wechat; no phone has accounts:wechat" in out

    assert as_json.returncode == 1, as_json.stderr[-3000:]
    summary = json.loads(as_json.stdout)
    assert summary["tasks"]["pending"] == 2 and summary["tasks"]["done"] == 1
    [unmet] = summary["unmet"]
    assert unmet["requires"] == ["accounts:wechat"] and unmet["tasks"] == 2
    assert unmet["missing"] == ["accounts:wechat"]
    assert sorted(unmet["phones"]) == sorted(farm.serials)
    assert all("vendor:sim" in tags for tags in unmet["phones"].values())

    # Both batches stopped with tasks left and let go of their phones: their runs read stalled, not running.
    assert summary["status"] == "stalled"
    listed = farm_cli("runs", "--db", db, "--json")
    assert listed.returncode == 0, listed.stderr[-3000:]
    assert [r["status"] for r in json.loads(listed.stdout)] == ["stalled", "stalled"]
    with TrajectoryStore.open(db) as store:
        assert {r.status.value for r in store.list_runs()} == {"running"}  # read-time only: nothing written

    # One phone is unplugged and left out of the inventory: `devices` shows it gone, with when it was last heard of.
    left = farm.serials[1]
    farm.client.disconnect(left)
    farm.wait_for_state([farm.serials[0]], "device", 10)
    one = tmp_path / "one.yaml"
    one.write_text(
        yaml.safe_dump(
            {"adb": f"127.0.0.1:{farm.adb_port}", "discover": True, "devices": [{"serial": farm.serials[0]}]}
        ),
        "utf-8",
    )
    listed = farm_cli("devices", "--devices", str(one), "--db", db, "--no-probe", "--json")
    assert listed.returncode == 0, listed.stderr[-3000:]
    rows = {r["serial"]: r for r in json.loads(listed.stdout)}
    assert rows[farm.serials[0]]["state"] == "online"
    assert rows[left]["state"] == "gone" and rows[left]["last_seen"], rows
    shown = farm_cli("devices", "--devices", str(one), "--db", db, "--no-probe", env={"COLUMNS": "250"})
    assert shown.returncode == 0 and "gone, last seen" in " ".join(shown.stdout.split()), shown.stdout
