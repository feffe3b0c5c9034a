"""A replay suite as a regression test, through the real stack: a batch records episodes on simulated phones, and
`replay --run RUN` replays them over the farm's phones with the farm's queue and safety policy, reporting each as
replayed, stopped (why, where, both screens side by side in the HTML report) or needing a person.

This drives the library on phones this process owns, so their state proves each result and the tasks' state checks
verify the replays; tests/cli/test_cli_replay_suite.py runs it as a user (and CI) would, through the commands."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import yaml
from replay_kit import TASK, lisi_first

from mobile_agent.cli.replay_suite import run_suite
from mobile_agent.farm.inventory import discover, load_inventory
from mobile_agent.farm.scheduler.jobs import SchedulerConfig
from mobile_agent.farm.scheduler.pool import WorkerPool
from mobile_agent.farm.scheduler.runner import AgentRunner, EpisodeDefaults, ModelSettings
from mobile_agent.farm.scheduler.runs import submit
from mobile_agent.replay.results import ReplayOptions, ResetMode
from mobile_agent.sim.farm import SimFarm
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store.store import TrajectoryStore

MEITUAN = "com.sankuai.meituan"
TASKS = {
    "tasks": [
        {
            "task": TASK,
            "app": "微信",
            "reset": "force-stop",
            "safety": {"allow": ["send@com.tencent.mm"]},
            "check": {"state": ["messages_sent contains {contact: 张三, text: 晚上好}"]},
        },
        {"task": "关闭手机的WLAN", "app": "设置", "check": {"state": ["settings_changed.wifi == false"]}},
        {
            "task": "在美团点一份黄焖鸡米饭",
            "app": "美团",
        },  # allowed by the batch's own policy, not by the task
    ]
}


def _devices(path: Path, farm: SimFarm) -> Path:
    entries = [{"serial": s} for s in farm.serials]
    path.write_text(
        yaml.safe_dump({"adb": f"127.0.0.1:{farm.adb_port}", "discover": False, "devices": entries})
    )
    return path


def _state_of(farm: SimFarm):
    return lambda entry: farm.phones[entry.serial].state.as_dict() if entry.serial in farm.phones else None


def _batch(adb_server, folder: Path) -> tuple[str, str]:
    """The task file run as a batch on two fresh phones, every episode checked on its phone's state."""
    url = f"sqlite:///{folder / 'store.db'}"
    tasks = folder / "tasks.yaml"
    tasks.write_text(yaml.safe_dump(TASKS, allow_unicode=True), "utf-8")
    with (
        SimFarm(2, adb_port=adb_server.port) as farm,
        SimModelServer(family="ui-venus-2") as model,
        TrajectoryStore.open(url) as store,
    ):
        run = submit(store, tasks, config={"allow": [f"order@{MEITUAN}", f"pay@{MEITUAN}"]})
        runner = AgentRunner(
            store,
            ModelSettings((model.base_url,), model.served_model),
            defaults=EpisodeDefaults(max_steps=12, timeout_s=120),
            phone_state=_state_of(farm),
        )
        phones = discover(load_inventory(_devices(folder / "batch.yaml", farm)))
        pool = WorkerPool(store, phones, runner, config=SchedulerConfig(poll_s=0.05), run_ids=[run.id])
        worker = threading.Thread(target=pool.run)
        worker.start()
        worker.join(240)
        runner.close()
        assert not worker.is_alive(), "the batch did not finish"
        outcomes = sorted(str(e.outcome) for e in store.list_episodes(run_id=run.id, limit=None))
        assert outcomes == ["finished"] * 3, outcomes
    return url, run.id


def test_a_suite_reports_each_episode_and_shows_stopped_ones_side_by_side(
    adb_server, tmp_path: Path, capsys
) -> None:
    url, run_id = _batch(adb_server, tmp_path)
    with SimFarm(2, adb_port=adb_server.port) as farm:
        for serial in farm.serials:
            farm.phones[serial].apply_scenario(
                lisi_first()
            )  # 李四 where 张三 was: the WeChat replay must stop
        passed = run_suite(
            url,
            run=run_id,
            episodes=[],
            episodes_file=None,
            options=ReplayOptions(reset=ResetMode.FORCE_STOP, wait_s=2.0),
            reset_given=False,
            safety=None,
            safety_words={},
            devices=_devices(tmp_path / "suite.yaml", farm),
            device=None,
            adb=None,
            apps_dir=None,
            report=str(tmp_path / "suite.html"),
            name="nightly",
            show=False,
            as_json=True,
            phone_state=_state_of(farm),
        )
        sent = [m for s in farm.serials for m in farm.phones[s].state.as_dict()["messages_sent"]]
        orders = [o for s in farm.serials for o in farm.phones[s].state.as_dict()["orders"]]
    summary = json.loads(capsys.readouterr().out)
    assert passed is False and summary["passed"] is False
    by_task = {e["task"]: e for e in summary["episodes"]}
    assert summary["counts"] == {"replayed": 1, "stopped": 1, "needs_person": 1, "failed": 0, "pending": 0}
    wechat, wifi, order = by_task[TASK], by_task["关闭手机的WLAN"], by_task["在美团点一份黄焖鸡米饭"]
    assert wechat["status"] == "stopped" and wechat["step"] == 1 and "李四" in wechat["why"]
    assert sent == [] and orders == []  # nothing sent to 李四, nothing ordered without a yes
    assert wifi["status"] == "replayed" and wifi["verdict"] == wifi["source_verdict"] == "complete"
    assert order["status"] == "needs_person" and f"--allow order@{MEITUAN}" in order["why"]
    page = Path(summary["report"]).read_text("utf-8")
    section = page[page.index(f'id="{wechat["source_id"]}"') :]
    images = re.findall(r'<img src="([^"]+)"', section)
    assert len(images) >= 2 and "recorded" in section and "live" in section
    assert all((Path(summary["report"]).parent / src).is_file() for src in images)
    with TrajectoryStore.open(
        url
    ) as store:  # the suite is a run of its own, its replays linked to their sources
        suite = store.run(summary["run_id"])
        replays = store.list_episodes(run_id=suite.id, limit=None)
    assert suite.name == "nightly" and {e.source_episode_id for e in replays} == {
        e["source_id"] for e in summary["episodes"]
    }
