"""The critic is bounded by the step's deadline: `mobile-agent run --critic URL` through the real stack (the real CLI
process, a simulated phone on the real adb server, the simulated GUI model, and a second simulated model endpoint
as the critic that reads the critic's request and never answers, or answers one byte every 2 s).

The episode ends as ``timeout`` within its limit plus a few seconds, the step that overran is written and did
nothing on the phone, and the phone's lease is released, exactly as for a hanging GUI model endpoint
(test_bounded_waits.py). A critic that fails for another reason (it answers, but not with a label) still lets the
action through when it fails open.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from mobile_agent.actions import Outcome
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store import phones as phone_db
from mobile_agent.store.store import TrajectoryStore

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "mobile_agent.cli.app"]
TASK = "评审超时测试：打开微信"
SLACK_S = 5.0  # an overrunning step ends the episode within its limit plus this (as in test_bounded_waits.py)
GUI_SCRIPT = f"""task: {TASK}
turns:
  - action: {{kind: launch, app: 微信}}
  - action: {{kind: finish, text: 已打开}}
"""
CRITIC_FAULTS = {  # the critic's first request: read and never answered, or its reply one byte every 2 s
    "hang": "  - hang: true\n    action: {kind: wait}\n",
    "trickle": "  - trickle_ms: 2000\n    action: {kind: wait}\n",
}


def _script(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "script.yaml").write_text(text, encoding="utf-8")
    return folder


def _run(farm, model: SimModelServer, critic: SimModelServer, db: str, cwd: Path, *extra: str):
    started = time.monotonic()
    done = subprocess.run(
        [*CLI, "run", TASK, "--non-interactive", "--device", farm.serials[0]]
        + ["--adb", f"127.0.0.1:{farm.adb_port}", "--base-url", model.base_url, "--model", "sim", "--db", db]
        + ["--critic", critic.base_url, "--critic-model", "sim", *extra],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )
    return done, time.monotonic() - started


@pytest.mark.parametrize(
    ("fault", "limits", "fail_closed"),
    [
        ("hang", ["--step-timeout", "6"], False),
        ("hang", ["--step-timeout", "6"], True),
        ("trickle", ["--timeout", "10"], False),
    ],
    ids=["hang-step-timeout", "hang-fail-closed", "trickle-timeout"],
)
def test_a_silent_critic_ends_the_episode_as_timeout_within_the_limit(
    sim_farm, tmp_path, fault, limits, fail_closed
):
    farm = sim_farm(1, scenario="wechat_send")
    phone = farm.phones[farm.serials[0]]
    limit = float(limits[1])
    db = f"sqlite:///{tmp_path / 'store.db'}"
    gui = _script(tmp_path / "gui", GUI_SCRIPT)
    faulty = _script(tmp_path / "critic", f"task: {TASK}\nturns:\n{CRITIC_FAULTS[fault]}")
    extra = [*limits, *(["--critic-fail-closed"] if fail_closed else [])]
    with (
        SimModelServer(scripts=[gui], model_name="sim") as model,
        SimModelServer(scripts=[faulty], model_name="sim") as critic,
    ):
        done, elapsed = _run(farm, model, critic, db, tmp_path, *extra)
        asked_critic = critic.peak_in_flight  # a hung request is logged in .requests only when it ends
    assert done.returncode == 1, done.stdout + done.stderr
    assert "timeout" in done.stdout + done.stderr and "Traceback" not in done.stderr
    assert asked_critic, "the critic was never asked"
    with TrajectoryStore.open(db) as store:
        (episode,) = store.list_episodes()
        assert episode.outcome == Outcome.TIMEOUT, episode.outcome_detail
        assert "ran past" in (episode.outcome_detail or "")
        (step,) = store.steps(episode.id)  # the step whose critic overran: written, and nothing done
        assert step.error_kind == "timeout" and step.action is None and "ran past" in (step.error_text or "")
        took = (episode.ended_at - episode.started_at).total_seconds()
        assert not any(info.busy() for info in phone_db.farm_devices(store))  # the phone was released
    assert not [e for e in phone.events if e.kind == "launch"]  # the action the critic held up never ran
    assert took < limit + SLACK_S, f"the episode took {took:.1f} s for a limit of {limit:.0f} s"
    # The process also starts Python, the store and the phone's u2 before the episode's clock starts.
    assert elapsed < limit + SLACK_S + 15, f"the run took {elapsed:.1f} s (the episode {took:.1f} s)"


def test_a_critic_failing_otherwise_still_lets_the_action_through_when_failing_open(sim_farm, tmp_path):
    """The critic endpoint answers, but with no label (a GUI reply, not the JSON asked for): as before the fix."""
    farm = sim_farm(1, scenario="wechat_send")
    phone = farm.phones[farm.serials[0]]
    db = f"sqlite:///{tmp_path / 'store.db'}"
    gui = _script(tmp_path / "gui", GUI_SCRIPT)
    with (
        SimModelServer(scripts=[gui], model_name="sim") as model,
        SimModelServer(scripts=[], model_name="sim") as critic,
    ):
        done, _ = _run(farm, model, critic, db, tmp_path, "--timeout", "60")
    assert done.returncode == 0, done.stdout + done.stderr
    with TrajectoryStore.open(db) as store:
        (episode,) = store.list_episodes()
        assert episode.outcome == Outcome.FINISHED, episode.outcome_detail
        first = store.steps(episode.id)[0]
        critic_said = [d["reason"] for d in first.guard_decisions if d["guard"] == "critic"]
        assert critic_said and critic_said[0].startswith("unavailable: critic unavailable")
    assert [e.detail["package"] for e in phone.events if e.kind == "launch"] == ["com.tencent.mm"]
