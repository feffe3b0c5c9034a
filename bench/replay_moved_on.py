"""Replay on simulated phones that have moved on since the recording: the cases of issue 24, measured. Prints JSON.

issue cases (the `phone` latency profile: screen changes animate, apps cold-start):
  mid_transition   episodes recorded by a batch (whose reset, force-stop, presses HOME just before the first
                   screenshot, so the recorded first frame is mid-transition), each replayed on a fresh phone (only that frame differs)
                   and on the phone the batch left behind (its chat preview changed too)
  changed_preview  one episode recorded as `run`/the demo does, replayed again and again on the same phone (张三's
                   chat preview now shows the message the last replay sent)
  Before each replay the phone is brought to the home screen with WeChat stopped (`am force-stop`, HOME), as a user
  would do by hand; with --reset-option the replay's own `--reset force-stop` does it instead (new code only).

world (the issue's "done when"): 20 episodes recorded by the demo's task (2) and batches (18: WeChat send, a
  Meituan order, Wi-Fi off, dark mode, an Alipay transfer up to the password; each batch on as many fresh phones of
  its scenario as it has episodes, so no recording starts where another left the phone), each replayed on fresh
  phones whose world differs only in what the task does not touch: another resolution (720x1600); a world that
  moved on (a new chat on top of WeChat's list and new previews, other searches in Meituan's history, a new recent
  payee in Alipay; the settings app has nothing of the kind); a splash ad the recording did not have. A replay counts when it ends
  as its recording did and the scenario's check passes on the replay's phone.

    python bench/replay_moved_on.py                 # everything (about 7 minutes on 2 cores)
    python bench/replay_moved_on.py --part issue    # or --part world
The script uses only the replay API that predates issue 24 (replay_episode, ReplayOptions), so the same file
measures an older checkout: PYTHONPATH=/path/to/old/checkout python bench/replay_moved_on.py
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import yaml

from mobile_agent.agent.runtime import run_task
from mobile_agent.farm.inventory import discover, load_inventory
from mobile_agent.farm.scheduler.jobs import SchedulerConfig
from mobile_agent.farm.scheduler.pool import WorkerPool
from mobile_agent.farm.scheduler.runner import AgentRunner, EpisodeDefaults, ModelSettings
from mobile_agent.farm.scheduler.runs import submit
from mobile_agent.farm.tasks import ResetMode as BatchReset
from mobile_agent.gate.policy import parse_policy
from mobile_agent.replay.replayer import replay_episode
from mobile_agent.sim.farm import AdbServer, SimFarm, bundled_adb_path, free_port
from mobile_agent.sim.scenario import load_scenario, make_scenario
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.sim.state import WorldData
from mobile_agent.store.store import TrajectoryStore

try:  # issue 24 moved the records out of the replayer
    from mobile_agent.replay.results import ReplayOptions
except ImportError:  # an older checkout
    from mobile_agent.replay.replayer import ReplayOptions  # type: ignore[no-redef]

WECHAT = "com.tencent.mm"
MEITUAN = "com.sankuai.meituan"
ALIPAY = "com.eg.android.AlipayGphone"
SETTINGS = "com.android.settings"
POLICY_WORDS = [f"send@{WECHAT}", f"order@{MEITUAN}", f"pay@{MEITUAN}", f"transfer@{ALIPAY}"]
BATCH = [  # scenario, repeats: 18 episodes
    ("wechat_send", 6),
    ("meituan_order", 4),
    ("settings_wifi_off", 3),
    ("settings_dark_mode", 3),
    ("alipay_transfer", 2),
]
APP_OF = {"wechat_send": WECHAT, "meituan_order": MEITUAN, "alipay_transfer": ALIPAY}
APP_OF.update({"settings_wifi_off": SETTINGS, "settings_dark_mode": SETTINGS})


def _shell_prepare(adb_port: int, serial: str, package: str) -> None:
    import adbutils

    device = adbutils.AdbClient(host="127.0.0.1", port=adb_port).device(serial)
    device.shell(["am", "force-stop", package])
    device.shell(["input", "keyevent", "KEYCODE_HOME"])
    time.sleep(0.5)


def _replay(url: str, episode: str, farm: SimFarm, serial: str, *, reset: bool = False, **options) -> dict:
    extra = {"reset": "force-stop"} if reset else {}
    with TrajectoryStore.open(url) as store:
        started = time.monotonic()
        result = replay_episode(
            store,
            episode,
            device=serial,
            adb=f"127.0.0.1:{farm.adb_port}",
            options=ReplayOptions(**options, **extra),
            safety=parse_policy(allow=POLICY_WORDS),
        )
        seconds = time.monotonic() - started
        distance = _first_frame_distance(store, episode, result.episode_id)
    stopped = [s.index for s in result.divergences if not s.performed]
    return {
        "outcome": str(result.outcome),
        "stopped_at": stopped[0] if stopped else None,
        "detail": (result.detail or "")[:300],
        "seconds": round(seconds, 2),
        "first_frame_hash_distance": distance,
    }


def _first_frame_distance(store: TrajectoryStore, source: str, replay: str | None) -> int | None:
    """Hash distance (of 64) between the recording's first screenshot and the replay's first (settled) one."""
    from PIL import Image

    from mobile_agent.replay import replayer

    distance = getattr(replayer, "screen_distance", None)
    if distance is None:
        from mobile_agent.replay.screens import screen_distance as distance
    if replay is None or not store.steps(replay):
        return None
    recorded, live = (
        store.screenshot_path(store.steps(source)[0]),
        store.screenshot_path(store.steps(replay)[0]),
    )
    if recorded is None or live is None:
        return None
    with Image.open(live) as image:
        return distance(recorded, image)


def _devices(folder: Path, farm: SimFarm, name: str) -> Path:
    path = folder / name
    entries = [{"serial": s} for s in farm.serials]
    path.write_text(
        yaml.safe_dump({"adb": f"127.0.0.1:{farm.adb_port}", "discover": False, "devices": entries})
    )
    return path


def _batch(folder: Path, farm: SimFarm, model: SimModelServer, url: str, tasks: list[dict]) -> list:
    path = folder / "tasks.yaml"
    path.write_text(yaml.safe_dump({"tasks": tasks}, allow_unicode=True), "utf-8")
    with TrajectoryStore.open(url) as store:
        run = submit(store, path, config={"allow": POLICY_WORDS})
        runner = AgentRunner(
            store,
            ModelSettings((model.base_url,), model.served_model),
            defaults=EpisodeDefaults(max_steps=14, timeout_s=180, reset=BatchReset.HOME),
        )
        phones = discover(load_inventory(_devices(folder, farm, "devices.yaml")))
        pool = WorkerPool(store, phones, runner, config=SchedulerConfig(poll_s=0.05), run_ids=[run.id])
        worker = threading.Thread(target=pool.run)
        worker.start()
        worker.join(900)
        runner.close()
        return list(reversed(store.list_episodes(run_id=run.id, limit=None)))


def _end(outcome: str) -> str:
    return (
        "needs_user" if outcome.startswith("needs_user") else outcome
    )  # needs_user:expired: nobody answered


def _summary(rows: list[dict]) -> dict:
    return {
        "replays": len(rows),
        "outcomes": dict(Counter(r["outcome"] for r in rows)),
        "stopped_at_step": dict(Counter(str(r["stopped_at"]) for r in rows if r["stopped_at"] is not None)),
    }


def issue_cases(adb_port: int, folder: Path, repeats: int, reset_option: bool) -> dict:
    url = f"sqlite:///{folder / 'issue.db'}"
    scenario = load_scenario("wechat_send")
    out: dict = {}
    with (
        SimFarm(1, scenario="wechat_send", profile="phone", adb_port=adb_port) as farm,
        SimModelServer() as model,
    ):
        serial = farm.serials[0]
        entry = {"task": scenario.task, "app": "微信", "reset": "force-stop", "repeats": repeats}
        episodes = [e.id for e in _batch(folder, farm, model, url, [entry])]
        rows = []
        for episode in episodes:
            if not reset_option:
                _shell_prepare(farm.adb_port, serial, WECHAT)
            rows.append(_replay(url, episode, farm, serial, reset=reset_option))
        out["mid_transition_same_phone"] = {**_summary(rows), "rows": rows}
    rows = []
    for episode in episodes:  # on a fresh phone: only the first frame differs from the recording
        with SimFarm(1, scenario="wechat_send", profile="phone", adb_port=adb_port) as farm:
            rows.append(_replay(url, episode, farm, farm.serials[0]))
    out["mid_transition_fresh_phone"] = {**_summary(rows), "rows": rows}
    with (
        SimFarm(1, scenario="wechat_send", profile="phone", adb_port=adb_port) as farm,
        SimModelServer() as model,
    ):
        serial = farm.serials[0]
        with TrajectoryStore.open(url) as store:
            recorded = run_task(
                scenario.task,
                device=serial,
                adb=f"127.0.0.1:{farm.adb_port}",
                base_url=model.base_url,
                model=model.served_model,
                store=store,
                safety=parse_policy(allow=POLICY_WORDS),
            )
        rows = []
        for _ in range(repeats):
            if not reset_option:
                _shell_prepare(farm.adb_port, serial, WECHAT)
            rows.append(_replay(url, recorded.episode_id, farm, serial, reset=reset_option))
        sent = farm.phones[serial].state.as_dict()["messages_sent"]
        out["changed_preview"] = {
            **_summary(rows),
            "messages_sent_by_replays": len(sent) - 1,
            "all_to_zhangsan": all(m["contact"] == "张三" for m in sent),
            "rows": rows,
        }
    return out


def _moved_on_world(scenario: str) -> dict | None:
    """The seed of a world that moved on in what ``scenario``'s task does not touch; None when there is none."""
    world = WorldData()
    if scenario == "wechat_send":
        chats = world.wechat_chats
        later = {n: [*m, {"from": n, "text": f"{n}的新消息"}] for n, m in chats.items()}
        rest = [n for n in later if n != "张三"]
        order = {"陈晨": [{"from": "陈晨", "text": "在吗？"}], "张三": later["张三"]}
        return {"wechat_chats": {**order, **{n: later[n] for n in rest[1::2] + rest[0::2]}}}
    if scenario == "meituan_order":
        return {"search_history": ["奶茶", "咖啡", "麦当劳", "水果", "黄焖鸡米饭"]}
    if scenario == "alipay_transfer":
        return {"alipay_contacts": ["陈晨", *world.alipay_contacts]}
    return None


def _variant_phone(farm: SimFarm, scenario: str, variant: str) -> None:
    base = load_scenario(scenario)
    data = base.model_dump(by_alias=True, exclude={"source"})
    if variant == "moved_on" and (seed := _moved_on_world(scenario)):
        data["seed"] = {**data.get("seed", {}), **seed}
    if variant == "popup":
        data["popups"] = {APP_OF[scenario]: [{"kind": "splash", "seconds": 8}]}
    if variant != "resolution":
        farm.phones[farm.serials[0]].apply_scenario(make_scenario(**data))


def world(adb_port: int, folder: Path) -> dict:
    url = f"sqlite:///{folder / 'world.db'}"
    recorded: list[tuple[str, str, str]] = []  # (episode, scenario, outcome)
    with SimModelServer() as model:
        for _ in range(2):  # the demo's task, as `mobile-agent demo` records it
            with (
                SimFarm(1, scenario="wechat_send", adb_port=adb_port) as farm,
                TrajectoryStore.open(url) as store,
            ):
                result = run_task(
                    load_scenario("wechat_send").task,
                    device=farm.serials[0],
                    adb=f"127.0.0.1:{farm.adb_port}",
                    base_url=model.base_url,
                    model=model.served_model,
                    store=store,
                    safety=parse_policy(allow=[f"send@{WECHAT}"]),
                )
                recorded.append((result.episode_id, "wechat_send", str(result.outcome)))
        for name, repeats in BATCH:  # a batch per task, one fresh phone per episode of it: valid recordings
            task = {
                "task": load_scenario(name).task,
                "repeats": repeats,
                "reset": "force-stop",
                "app": APP_OF[name],
            }
            with SimFarm(repeats, scenario=name, adb_port=adb_port) as farm:
                for e in _batch(folder, farm, model, url, [task]):
                    recorded.append((e.id, name, str(e.outcome)))
    rows = []
    for episode, scenario, outcome in recorded:
        for variant in ("resolution", "moved_on", "popup"):
            size = {"width": 720, "height": 1600} if variant == "resolution" else {}
            with SimFarm(1, scenario=scenario, adb_port=adb_port, **size) as farm:
                _variant_phone(farm, scenario, variant)
                row = _replay(url, episode, farm, farm.serials[0])
                check = load_scenario(scenario).check(farm.phones[farm.serials[0]])
            same = _end(row["outcome"]) == _end(outcome) and check.ok
            rows.append(
                {
                    "episode": episode,
                    "scenario": scenario,
                    "variant": variant,
                    "recorded": outcome,
                    "check_ok": check.ok,
                    "same_verified_outcome": same,
                    **row,
                }
            )
    per_variant = {
        v: f"{sum(r['same_verified_outcome'] for r in rows if r['variant'] == v)}/{len(recorded)}"
        for v in ("resolution", "moved_on", "popup")
    }
    episodes_ok = sum(
        all(r["same_verified_outcome"] for r in rows if r["episode"] == e) for e, _, _ in recorded
    )
    return {
        "episodes": len(recorded),
        "recorded_outcomes": dict(Counter(o for _, _, o in recorded)),
        "same_verified_outcome_per_variant": per_variant,
        "episodes_same_in_every_variant": f"{episodes_ok}/{len(recorded)}",
        "failures": [r for r in rows if not r["same_verified_outcome"]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("issue", "world", "all"), default="all")
    parser.add_argument("--repeats", type=int, default=3, help="replays per issue case (default 3)")
    parser.add_argument(
        "--reset-option", action="store_true", help="issue cases: --reset force-stop (new code)"
    )
    args = parser.parse_args()
    port = free_port()
    os.environ["ADBUTILS_ADB_PATH"] = bundled_adb_path()
    os.environ["ANDROID_ADB_SERVER_PORT"] = str(port)
    server = AdbServer(port).ensure_running()
    report: dict = {"load_before": os.getloadavg()[0]}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            if args.part in ("issue", "all"):
                report["issue"] = issue_cases(port, folder, args.repeats, args.reset_option)
            if args.part in ("world", "all"):
                report["world"] = world(port, folder)
    finally:
        server.stop()
    report["load_after"] = os.getloadavg()[0]
    print(json.dumps(report, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
