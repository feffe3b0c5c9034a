"""What the replay integration tests share: an episode recorded by the agent on a fresh simulated phone (SimFarm +
SimModelServer + run_task, through a real adb server and uiautomator2), its replay, and worlds that have moved on."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

from mobile_agent.actions import Outcome
from mobile_agent.agent.runtime import run_task
from mobile_agent.gate.policy import parse_policy
from mobile_agent.replay.replayer import replay_episode
from mobile_agent.replay.results import ReplayOptions
from mobile_agent.sim.farm import SimFarm
from mobile_agent.sim.scenario import make_scenario
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.sim.state import WorldData
from mobile_agent.store.store import TrajectoryStore

TASK = "给张三发微信说晚上好"
SCENARIO = "wechat_send"


@dataclass(frozen=True)
class Recording:
    db_url: str
    episode_id: str
    final_state: dict


def record(adb_server, folder: Path, scenario: str, task: str, allow: list[str]) -> Recording:
    """Runs `task` on a fresh phone of `scenario` with the scripted model, recording into a store in `folder`."""
    url = f"sqlite:///{folder / 'store.db'}"
    with (
        TrajectoryStore.open(url) as store,
        SimFarm(1, scenario=scenario, adb_port=adb_server.port) as farm,
        SimModelServer(family="ui-venus-2") as model,
    ):
        serial = farm.serials[0]
        result = run_task(
            task,
            device=serial,
            adb=f"127.0.0.1:{farm.adb_port}",
            base_url=model.base_url,
            model=model.served_model,
            family="ui-venus-2",
            store=store,
            safety=parse_policy(allow=allow),
        )
        assert result.outcome == Outcome.FINISHED, result
        state = copy.deepcopy(farm.phones[serial].state.as_dict())
    return Recording(url, result.episode_id, state)


SEND_ALLOWED = parse_policy(allow=["send@com.tencent.mm"])


def replay(recording: Recording, farm: SimFarm, safety=SEND_ALLOWED, **options) -> tuple:
    """``recording`` replayed on the farm's first phone: (result, the replay episode, its steps, the source's)."""
    with TrajectoryStore.open(recording.db_url) as store:
        result = replay_episode(
            store,
            recording.episode_id,
            device=farm.serials[0],
            adb=f"127.0.0.1:{farm.adb_port}",
            options=ReplayOptions(**options),
            safety=safety,
        )
        steps = store.steps(result.episode_id) if result.episode_id else []
        episode = store.episode(result.episode_id) if result.episode_id else None
        source_steps = store.steps(recording.episode_id)
    return result, episode, steps, source_steps


def lisi_first(task: str = TASK) -> object:
    """The chat list with 李四 in the first row, where the recording tapped 张三 (李四 moved past him)."""
    chats = WorldData().wechat_chats
    reordered = {"李四": chats["李四"], **{k: v for k, v in chats.items() if k != "李四"}}
    return make_scenario(name="wechat_lisi_first", task=task, seed={"wechat_chats": reordered})


def moved_on(task: str = TASK) -> object:
    """WeChat a day later: a new chat from 陈晨 on top, 张三 below it with a new message (another preview), and
    every other chat with a new message, their order shuffled below him."""
    chats = WorldData().wechat_chats
    later = {name: [*messages, {"from": name, "text": f"{name}的新消息"}] for name, messages in chats.items()}
    rest = [name for name in later if name != "张三"]
    shuffled = rest[1::2] + rest[0::2]
    seed = {
        "陈晨": [{"from": "陈晨", "text": "在吗？"}],
        "张三": later["张三"],
        **{n: later[n] for n in shuffled},
    }
    return make_scenario(name="wechat_moved_on", task=task, seed={"wechat_chats": seed})
