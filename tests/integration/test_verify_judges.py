"""`mobile-agent verify` with several scripted judges that disagree: majority, ties, visible dissent, labels, runs.

Judges are real HTTP servers on loopback reached through the OpenAI client; the episodes are real simulated-phone
screenshots recorded in a real store.
"""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from mobile_agent.actions import Action, Outcome
from mobile_agent.cli.verify import verify_command
from mobile_agent.errors import UserError
from mobile_agent.sim.phone.phone import Phone
from mobile_agent.sim.servers.judge_server import JudgeScript, ScriptedJudgeServer
from mobile_agent.store.judgments import judgments
from mobile_agent.store.records import StepRecord
from mobile_agent.store.store import TrajectoryStore
from mobile_agent.verify.judges import EXTRACT, TRAJECTORY
from mobile_agent.verify.service import episode_verdict
from mobile_agent.verify.verdict import Verdict

TASK = "给张三发微信说晚上好"

app = typer.Typer()
app.command()(verify_command)


@pytest.fixture(scope="module")
def screens() -> list[bytes]:
    phone = Phone()
    shots = [phone.screenshot("jpeg")]
    phone.launch("com.tencent.mm")
    shots.append(phone.screenshot("jpeg"))
    phone.tap(540, 300)  # the first chat; only the pictures matter to these tests
    shots.append(phone.screenshot("jpeg"))
    return shots


@pytest.fixture
def db(tmp_path):
    return f"sqlite:///{tmp_path}/store.db"


def _record(db: str, screens: list[bytes], run_id: str | None = None) -> str:
    with TrajectoryStore.open(db) as store:
        episode = store.start_episode(TASK, device="sim", family="ui-venus-2", model="m", run_id=run_id)
        actions = [Action.launch("com.tencent.mm"), Action.tap(540, 300), Action.finish("done")]
        for index, (shot, action) in enumerate(zip(screens, actions, strict=True)):
            store.record_step(episode.id, StepRecord(index=index, action=action), screenshot=shot)
        store.finish_episode(episode.id, Outcome.FINISHED, answer="done")
        return episode.id


@pytest.fixture
def judges():
    verdicts = ["partial", "complete", "partial"]
    servers = [
        ScriptedJudgeServer(
            JudgeScript(default_verdict=v, labels={"tap": "wrong"}), model=f"judge-{i}"
        ).start()
        for i, v in enumerate(verdicts)
    ]
    yield servers
    for server in servers:
        server.close()


def _invoke(*args: str):
    result = CliRunner().invoke(app, list(args), catch_exceptions=True)
    return result


def test_majority_wins_and_the_dissent_is_shown_and_stored(db, screens, judges):
    ep = _record(db, screens)
    args = [ep, "--db", db]
    for server in judges:
        args += ["--judge", server.base_url]
    result = _invoke(*args, "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    verdict = payload["episodes"][0]
    assert verdict["verdict"] == "partial" and verdict["success"] is False and verdict["source"] == "judges"
    assert abs(verdict["agreement"] - 2 / 3) < 1e-9
    assert sorted(v["verdict"] for v in verdict["votes"]) == ["complete", "partial", "partial"]
    assert payload["summary"]["successes"] == 0
    # each judge was asked for points, then judged them on the screenshots; models came from GET /models
    for server in judges:
        assert [r.kind for r in server.requests] == [EXTRACT, TRAJECTORY]
        assert server.requests[1].images == 3
    with TrajectoryStore.open(db) as store:
        rows = judgments(store, ep, source="judge")
        assert sorted(r.model for r in rows) == ["judge-0", "judge-1", "judge-2"]
        assert all(r.prompt_version == "judge-v1" and r.latency_s is not None for r in rows)
        final = episode_verdict(store, ep)
        assert final.verdict is Verdict.PARTIAL
    text = _invoke(ep, "--db", db)  # the stored votes are read back without asking again
    assert text.exit_code == 0
    assert "partial" in text.output and "dissent:" in text.output and "=complete" in text.output
    assert all(len(server.requests) == 2 for server in judges)


def test_a_tie_goes_to_the_conservative_verdict(db, screens, judges):
    ep = _record(db, screens)
    result = _invoke(
        ep, "--db", db, "--judge", judges[0].base_url, "--judge", judges[1].base_url, "--judge-model", "m"
    )
    assert result.exit_code == 0, result.output
    assert "on a tie" in result.output and "partial" in result.output


def test_labels_and_a_run_summary(db, screens, judges):
    with TrajectoryStore.open(db) as store:
        run_id = store.create_run("batch").id
    first, second = _record(db, screens, run_id), _record(db, screens, run_id)
    result = _invoke("--run", run_id, "--db", db, "--judge", judges[1].base_url, "--labels", "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert [e["episode"] for e in payload["episodes"]] == sorted([first, second])
    assert payload["summary"] == {
        "total": 2,
        "successes": 2,
        "success_rate": 1.0,
        "unverified": 0,
        "failed": 0,
        "partial": 0,
        "infeasible": 0,
        "complete": 2,
    }
    labels = payload["episodes"][0]["labels"]
    assert labels["1"][0]["label"] == "wrong" and labels["1"][0]["source"] == "judge"
    assert labels["0"][0]["label"] == "correct"


def test_an_unreachable_judge_leaves_the_others_to_vote(db, screens, judges):
    ep = _record(db, screens)
    judges[1].close()
    result = _invoke(
        ep, "--db", db, "--judge-model", "m", *sum((["--judge", s.base_url] for s in judges), [])
    )
    assert result.exit_code == 0, result.output
    with TrajectoryStore.open(db) as store:
        rows = judgments(store, ep, source="judge")
        assert sum(1 for r in rows if r.error) == 1
        assert episode_verdict(store, ep).verdict is Verdict.PARTIAL


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ([], "name one episode or one run"),
        (["abc", "--run", "def"], "name one episode or one run"),
        (
            ["--judge", "http://a/v1", "--judge-model", "x", "--judge-model", "y", "--judge-model", "z"],
            "--judge-model",
        ),
        (["ffffffffffff"], "no episode"),
    ],
)
def test_user_errors_are_user_errors(db, args, needle):
    result = _invoke(*args, "--db", db)
    assert isinstance(result.exception, UserError), result.output
    assert needle in result.exception.message
