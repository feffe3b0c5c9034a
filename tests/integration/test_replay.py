"""Replay through the real stack: an episode recorded by the agent (SimFarm + SimModelServer + run_task) is
replayed on fresh simulated phones over a real adb server and uiautomator2."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from mobile_agent.actions import ActionKind, Outcome, Size
from mobile_agent.agent.runtime import run_task
from mobile_agent.agent.safety import parse_policy
from mobile_agent.cli.report import replay_command
from mobile_agent.replay.replayer import DivergencePolicy, ReplayOptions, replay_episode
from mobile_agent.sim.farm import SimFarm
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store.records import ActionSource
from mobile_agent.store.store import TrajectoryStore

TASK = "给张三发微信说晚上好"
SCENARIO = "wechat_send"


@dataclass(frozen=True)
class Recording:
    db_url: str
    episode_id: str
    final_state: dict


@pytest.fixture(scope="module")
def recording(adb_server, tmp_path_factory) -> Recording:
    folder: Path = tmp_path_factory.mktemp("replay-store")
    url = f"sqlite:///{folder / 'store.db'}"
    with (
        TrajectoryStore.open(url) as store,
        SimFarm(1, scenario=SCENARIO, adb_port=adb_server.port) as farm,
        SimModelServer(family="ui-venus-2") as model,
    ):
        serial = farm.serials[0]
        result = run_task(
            TASK,
            device=serial,
            adb=f"127.0.0.1:{farm.adb_port}",
            base_url=model.base_url,
            model=model.served_model,
            family="ui-venus-2",
            store=store,
            safety=parse_policy(allow=["send@com.tencent.mm"]),
        )
        assert result.outcome == Outcome.FINISHED, result
        state = copy.deepcopy(farm.phones[serial].state.as_dict())
    assert state["messages_sent"], "the recorded run itself must have sent the message"
    return Recording(url, result.episode_id, state)


def _replay(recording: Recording, farm: SimFarm, **options) -> tuple:
    with TrajectoryStore.open(recording.db_url) as store:
        result = replay_episode(
            store,
            recording.episode_id,
            device=farm.serials[0],
            adb=f"127.0.0.1:{farm.adb_port}",
            options=ReplayOptions(**options),
        )
        steps = store.steps(result.episode_id) if result.episode_id else []
        episode = store.episode(result.episode_id) if result.episode_id else None
        source_steps = store.steps(recording.episode_id)
    return result, episode, steps, source_steps


def test_replay_on_a_fresh_phone_reproduces_the_final_state(adb_server, recording: Recording) -> None:
    with SimFarm(1, scenario=SCENARIO, adb_port=adb_server.port) as farm:
        result, episode, steps, source_steps = _replay(recording, farm, on_divergence=DivergencePolicy.STOP)
        state = farm.phones[farm.serials[0]].state.as_dict()
    assert result.outcome == Outcome.FINISHED
    assert result.divergences == []
    assert state == recording.final_state
    assert episode.source_episode_id == recording.episode_id
    assert all(s.action_source == ActionSource.REPLAY for s in steps)
    assert [s.action for s in steps] == [s.action for s in source_steps if s.action is not None]
    assert all(s.screenshot_path for s in steps)


def test_replay_maps_coordinates_to_another_resolution(adb_server, recording: Recording) -> None:
    with SimFarm(1, scenario=SCENARIO, adb_port=adb_server.port, width=720, height=1600) as farm:
        result, _, steps, source_steps = _replay(recording, farm, on_divergence=DivergencePolicy.STOP)
        state = farm.phones[farm.serials[0]].state.as_dict()
    assert result.outcome == Outcome.FINISHED, result.detail
    assert result.target_screen == Size(720, 1600)
    assert state == recording.final_state
    recorded_taps = [s for s in source_steps if s.action and s.action.kind is ActionKind.TAP]
    replayed_taps = [s for s in steps if s.action and s.action.kind is ActionKind.TAP]
    assert len(replayed_taps) == len(recorded_taps) >= 2
    for old, new in zip(recorded_taps, replayed_taps, strict=True):
        assert new.screen == Size(720, 1600)
        assert new.action.point.x == round(old.action.point.x * 720 / old.screen.width)
        assert new.action.point.y == round(old.action.point.y * 1600 / old.screen.height)


def test_a_scenario_with_an_extra_popup_is_reported_as_divergence(adb_server, recording: Recording) -> None:
    with SimFarm(1, scenario="wechat_send_splash", adb_port=adb_server.port) as farm:
        result, episode, steps, _ = _replay(recording, farm, on_divergence=DivergencePolicy.STOP)
        state = farm.phones[farm.serials[0]].state.as_dict()
    assert result.outcome == Outcome.error("divergence")
    assert [d.index for d in result.divergences] == [1]  # the screen after the launch shows the splash ad
    assert not result.divergences[0].screen_matches
    assert result.divergences[0].performed is False
    assert steps[-1].error_kind == "divergence" and steps[-1].action is None
    assert episode.outcome == Outcome.error("divergence")
    assert state["messages_sent"] == []


def test_replay_command_dry_run_and_divergence_policy(adb_server, recording: Recording) -> None:
    app = typer.Typer()
    app.command()(replay_command)
    app.command("noop")(lambda: None)  # a second command keeps typer from flattening the app
    with SimFarm(1, scenario=SCENARIO, adb_port=adb_server.port, width=720, height=1600) as farm:
        args = [
            "replay-command",
            recording.episode_id[:8],
            "--device",
            farm.serials[0],
            "--adb",
            f"127.0.0.1:{farm.adb_port}",
            "--db",
            recording.db_url,
        ]
        dry = CliRunner().invoke(app, [*args, "--dry-run"])
        wrong = CliRunner().invoke(app, [*args, "--on-divergence", "panic"])
        state = farm.phones[farm.serials[0]].state.as_dict()
    assert dry.exit_code == 0, dry.output
    assert "720x1600" in dry.output and "nothing was done" in dry.output
    assert state["messages_sent"] == []  # a dry run never acts
    assert wrong.exit_code != 0
    assert "stop, warn or continue" in wrong.exception.hint
