"""Offline evaluation against the simulated model: a script that errs on known steps gives known accuracies.

The episode is recorded through the real stack (SimFarm + SimModelServer + run_task); the evaluated "model" is a
second simulated server whose script for the same task answers every step, wrongly on purpose on two of them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from mobile_agent.actions import Outcome
from mobile_agent.agent.runtime import run_task
from mobile_agent.cli.report import eval_offline_command
from mobile_agent.evaluate.offline import EvalOptions, evaluate_offline
from mobile_agent.gate.policy import parse_policy
from mobile_agent.report.selection import select_episodes
from mobile_agent.sim.farm import SimFarm
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store.store import TrajectoryStore

TASK = "给张三发微信说晚上好"

# The recorded episode (shipped script wechat_send) is: launch 微信, tap 张三's chat, tap the input box,
# type 晚上好, tap 发送, finish. This script gets step 1's parameter wrong (a tap far below 张三's row) and
# step 2's type wrong (a swipe instead of a tap); the typed text differs only in width and spacing.
EVAL_SCRIPT = """\
task: 给张三发微信说晚上好
turns:
  - think: 打开微信
    action: {kind: launch, app: 微信}
  - think: 点错了地方
    action: {kind: tap, point: [481, 700]}
  - think: 往上滑
    action: {kind: swipe, point: [500, 800], end: [500, 300]}
  - think: 输入
    action: {kind: type, text: " 晚上好 "}
  - think: 发送
    action: {kind: tap, point: [890, 950]}
  - think: 完成
    action: {kind: finish, text: 好了}
"""


@pytest.fixture(scope="module")
def recorded(adb_server, tmp_path_factory) -> tuple[str, str]:
    folder: Path = tmp_path_factory.mktemp("eval-store")
    url = f"sqlite:///{folder / 'store.db'}"
    with (
        TrajectoryStore.open(url) as store,
        SimFarm(1, scenario="wechat_send", adb_port=adb_server.port) as farm,
        SimModelServer(family="ui-venus-2") as model,
    ):
        result = run_task(
            TASK,
            device=farm.serials[0],
            adb=f"127.0.0.1:{farm.adb_port}",
            base_url=model.base_url,
            model=model.served_model,
            family="ui-venus-2",
            store=store,
            safety=parse_policy(allow=["send@com.tencent.mm"]),
        )
        assert result.outcome == Outcome.FINISHED
        steps = store.steps(result.episode_id)
        assert [s.action.kind.value for s in steps] == ["launch", "tap", "tap", "type", "tap", "finish"]
    return url, result.episode_id


@pytest.fixture
def erring_model(tmp_path: Path):
    script = tmp_path / "eval_script.yaml"
    script.write_text(EVAL_SCRIPT, encoding="utf-8")
    with SimModelServer(family="ui-venus-2", scripts=[script]) as server:
        yield server


def test_eval_offline_reports_exact_type_and_parameter_accuracy(recorded, erring_model) -> None:
    url, episode_id = recorded
    with TrajectoryStore.open(url) as store:
        report = evaluate_offline(
            store,
            select_episodes(store, episodes=[episode_id]),
            EvalOptions("ui-venus-2", erring_model.base_url),
        )
    overall = report.overall
    assert (overall.steps, overall.type_correct, overall.param_correct) == (6, 5, 4)
    assert overall.type_accuracy == pytest.approx(5 / 6)
    assert overall.param_accuracy == pytest.approx(4 / 5)
    assert (overall.wrong_type, overall.wrong_param, overall.unparsed) == (1, 1, 0)
    by_step = {s.index: s for s in report.scores}
    assert by_step[1].type_correct and by_step[1].param_correct is False
    assert by_step[1].how == "outside the element bounds"  # scored by the recorded view tree of that step
    assert not by_step[2].type_correct and by_step[2].param_correct is None
    assert by_step[3].param_correct and by_step[4].param_correct
    assert list(report.by_app) == ["com.tencent.mm"]
    assert report.by_app["com.tencent.mm"].to_dict() == overall.to_dict()
    assert report.model == "ui-venus-2"  # the first model the endpoint lists


def test_eval_offline_command_prints_json_and_table(recorded, erring_model) -> None:
    url, episode_id = recorded
    app = typer.Typer()
    app.command()(eval_offline_command)
    app.command("noop")(lambda: None)
    base = ["eval-offline-command", episode_id, "--family", "ui-venus-2", "--base-url", erring_model.base_url]
    as_json = CliRunner().invoke(app, [*base, "--db", url, "--json"])
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.output)
    assert data["overall"]["type_accuracy"] == pytest.approx(5 / 6)
    assert data["overall"]["param_accuracy"] == pytest.approx(4 / 5)
    assert [s["step"] for s in data["steps"] if not s["type_correct"]] == [2]
    erring_model.reset()
    table = CliRunner().invoke(app, [*base, "--db", url], env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    assert "83.3%" in table.output and "80.0%" in table.output
