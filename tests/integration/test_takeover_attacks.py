"""Attacks on two promises, through real `mobile-agent` processes on one simulated phone.

1. A `run` or `resume` whose phone another `run --force` takes over stops before it touches the phone again: its
   episode ends ``interrupted`` naming the new holder, it exits 130 with one ``interrupted: ...`` line on stderr,
   and it leaves the lease (and the phone's u2 server) to the new holder. Attacked while the displaced run waits
   at the terminal question, while it is mid-action (a long press), as a `resume`, twice in a row (A displaced by
   B displaced by C), with `--json` and with `--stop-u2-server`.
2. With `run --critic URL` the critic is bounded by the step's deadline; attacked with a critic that hangs only on
   the re-ask after a ``wrong`` label, one that refuses connections (fail open / fail closed as before), and one
   that is slow but within the deadline (must not time out).

The model endpoints hold chosen requests (test_run_displaced.HoldingEndpoint) so that the moments are the test's.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_run_displaced import (
    ASKING,
    CLI,
    FIRST,
    SCRIPTS,
    SECOND,
    WAIT_S,
    HoldingEndpoint,
    _displaced_args,
    _env,
    _inputs,
    _stop,
    _wait,
)

from mobile_agent.actions import ActionKind, Outcome
from mobile_agent.sim.farm import free_port
from mobile_agent.sim.servers.judge_server import JudgeScript, ScriptedJudgeServer
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store import phones as phone_db
from mobile_agent.store.owners import HEARTBEAT_S
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.store import TrajectoryStore

pytestmark = pytest.mark.slow

MIDDLE = "接管者一：返回两次"  # key back, then (held) key back again, then finish
THIRD = "接管者二：返回"  # key back, then (held) finish
ENDING = (
    "接管测试：打开微信然后{kind}"  # launch 微信, then (held) a reply that ends the episode without acting
)
ENDINGS = {
    "finish": "{kind: finish, text: 完成}",
    "answer": "{kind: answer, text: 四十二}",
    "call_user": "{kind: call_user, text: 请确认}",
}
PRESSING = "接管测试：长按"  # launch 微信, a long press (qwen-vl family, 8 s), then (held) key home, finish
LONG_PRESS_MS = int((HEARTBEAT_S + 3) * 1000)  # longer than one renewal: the takeover lands mid-press
ATTACK_SCRIPTS = {
    **SCRIPTS,
    **{
        f"ending_{kind}.yaml": f"task: {ENDING.format(kind=kind)}\nturns:\n"
        f"  - action: {{kind: launch, app: 微信}}\n  - action: {action}\n"
        for kind, action in ENDINGS.items()
    },
    "middle.yaml": f"""task: {MIDDLE}
turns:
  - action: {{kind: key, key: back}}
  - action: {{kind: key, key: back}}
  - action: {{kind: finish, text: 完成}}
""",
    "third.yaml": f"""task: {THIRD}
turns:
  - action: {{kind: key, key: back}}
  - action: {{kind: finish, text: 完成}}
""",
}
PRESS_SCRIPTS = {  # the qwen-vl family carries a long press's duration
    "pressing.yaml": f"""task: {PRESSING}
turns:
  - action: {{kind: launch, app: 微信}}
  - action: {{kind: long_press, point: [500, 500], duration_ms: {LONG_PRESS_MS}}}
  - action: {{kind: key, key: home}}
  - action: {{kind: finish, text: 完成}}
""",
    "second.yaml": SCRIPTS["second.yaml"],
}


def _endpoint(tmp_path: Path, scripts: dict[str, str], family: str) -> Iterator[HoldingEndpoint]:
    folder = tmp_path / "scripts"
    folder.mkdir()
    for name, text in scripts.items():
        (folder / name).write_text(text, encoding="utf-8")
    with (
        SimModelServer(family=family, scripts=[folder], model_name="sim") as sim,
        HoldingEndpoint(sim.base_url) as endpoint,
    ):
        yield endpoint


@pytest.fixture
def model(tmp_path: Path) -> Iterator[HoldingEndpoint]:
    yield from _endpoint(tmp_path, ATTACK_SCRIPTS, "ui-venus-2")


@pytest.fixture
def qwen_model(tmp_path: Path) -> Iterator[HoldingEndpoint]:
    yield from _endpoint(tmp_path, PRESS_SCRIPTS, "qwen-vl")


def _args(
    farm, model: HoldingEndpoint, db: str, task: str, *extra: str, interactive: bool = False
) -> list[str]:
    phone = ["--device", farm.serials[0], "--adb", f"127.0.0.1:{farm.adb_port}"]
    asked = [] if interactive else ["--non-interactive"]
    return ["run", task, *phone, "--base-url", model.base_url, "--model", "sim", "--db", db, *asked, *extra]


class Proc:
    """A real CLI process; stdout and stderr go to files the test reads while it runs."""

    def __init__(self, tmp_path: Path, args: list[str], name: str, stdin: int = subprocess.DEVNULL) -> None:
        self.out, self.err = tmp_path / f"{name}.stdout", tmp_path / f"{name}.stderr"
        with self.out.open("w") as out, self.err.open("w") as err:
            self.popen = subprocess.Popen(
                [*CLI, *args], stdout=out, stderr=err, stdin=stdin, env=_env(tmp_path), cwd=tmp_path
            )
        self.pid = self.popen.pid

    def stderr(self) -> str:
        return self.err.read_text()

    def noticed(self) -> bool:
        return "taken over" in self.stderr()


def _force_second(
    tmp_path: Path, farm, model: HoldingEndpoint, db: str, first: Proc, procs: list, *extra: str
) -> tuple:
    """A second `run --force` takes the phone over: it acts and asks the model again (held there), and the first
    notices. (the second, its held request, when the takeover began)"""
    taken_at = time.time()
    second_held = model.hold(SECOND, turn=1)
    second = Proc(tmp_path, _args(farm, model, db, SECOND, "--force", *extra), "second")
    procs.append(second.popen)
    _wait(second_held.reached.is_set, "the second to act and ask again", procs)
    _wait(first.noticed, "the first to notice the takeover", procs)
    return second, second_held, taken_at


def _both_end(db: str, first: Proc, second: Proc, second_held) -> None:
    """The displaced first ends as interrupted (130) and leaves the lease to the second, which then finishes."""
    assert first.popen.wait(WAIT_S) == 130, first.stderr()
    assert _holder_pid(db) == str(second.pid)
    second_held.release.set()
    assert second.popen.wait(WAIT_S) == 0, second.stderr()


def _db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'replays' / 'mobile_agent.db'}"


def _holder_pid(db: str) -> str | None:
    with TrajectoryStore.open(db) as store:
        (device,) = phone_db.farm_devices(store)
        return device.worker.split(":")[1] if device.busy() else None


def _assert_displaced(db: str, task: str, proc: Proc, by: Proc) -> None:
    """The displaced process's promise: exit 130, one interrupted line, its episode interrupted naming ``by``."""
    err = proc.stderr()
    assert "Traceback" not in err, err
    interrupted = [line for line in err.splitlines() if line.startswith("interrupted:")]
    assert len(interrupted) == 1 and "was taken over by another process" in interrupted[0], err
    with TrajectoryStore.open(db) as store:
        (episode,) = [e for e in store.list_episodes() if e.task == task]
        assert episode.status is EpisodeStatus.ENDED
        assert episode.outcome == Outcome.INTERRUPTED, episode.outcome_detail
        detail = episode.outcome_detail or ""
        assert "taken over by another process" in detail and f"pid {by.pid}" in detail, detail
        assert all(s.status == "done" for s in store.steps(episode.id)), [
            s.status for s in store.steps(episode.id)
        ]
        assert not any(s.action is not None and s.action.key == "home" for s in store.steps(episode.id))


@pytest.mark.parametrize(
    "answered",
    [pytest.param(True, id="answered-late"), pytest.param(False, id="never-answered")],
)
def test_a_run_waiting_at_the_terminal_question_is_displaced_and_never_acts_on_the_answer(
    sim_farm, model, tmp_path, answered
):
    """Answered after the takeover was noticed: it must not act on the answer. Never answered: it must still end
    (it notices within one renewal; waiting on for a person to answer about a phone that is not its own is the
    attack)."""
    farm = sim_farm(1, scenario="wechat_send")
    phone = farm.phones[farm.serials[0]]
    db = _db(tmp_path)
    after_answer = model.hold(ASKING, turn=2)  # the request after the person answered: key home
    master, slave = pty.openpty()
    procs: list[subprocess.Popen] = []
    try:
        first = Proc(tmp_path, _args(farm, model, db, ASKING, interactive=True), "first", stdin=slave)
        procs.append(first.popen)
        _wait(lambda: "请确认" in first.out.read_text() + first.stderr(), "the terminal question", procs)
        second, second_held, taken_at = _force_second(tmp_path, farm, model, db, first, procs)
        ended_alone = False
        if not answered:  # nobody answers: the displaced run should not keep waiting for a phone not its own
            try:
                ended_alone = first.popen.wait(HEARTBEAT_S * 2) is not None
            except subprocess.TimeoutExpired:
                pass
        if not ended_alone:
            os.write(master, "好了\n".encode())
        after_answer.release.set()
        _both_end(db, first, second, second_held)
    finally:
        _stop(procs)
        os.close(master)
        os.close(slave)
    _assert_displaced(db, ASKING, first, second)
    assert not after_answer.reached.is_set(), "the displaced run asked the model again after the takeover"
    assert _inputs(phone, since=taken_at) == [("key", "back")]
    assert answered or ended_alone, "the displaced run kept waiting at the terminal question until answered"


def test_a_run_displaced_mid_long_press_records_the_press_it_made_and_nothing_after(
    sim_farm, qwen_model, tmp_path
):
    farm = sim_farm(1, scenario="wechat_send")
    phone = farm.phones[farm.serials[0]]
    db = _db(tmp_path)
    model = qwen_model
    press = model.hold(PRESSING, turn=1)  # released at once: the press starts, then the takeover
    after_press = model.hold(PRESSING, turn=2)  # key home: held until the takeover is noticed
    procs: list[subprocess.Popen] = []
    try:
        first = Proc(tmp_path, _args(farm, model, db, PRESSING, "--family", "qwen-vl"), "first")
        procs.append(first.popen)
        _wait(press.reached.is_set, "the first to ask for its long press", procs)
        press.release.set()
        time.sleep(0.5)  # the reply reaches the first and its press begins; the second starts meanwhile
        second, second_held, taken_at = _force_second(
            tmp_path, farm, model, db, first, procs, "--family", "qwen-vl"
        )
        after_press.release.set()
        _both_end(db, first, second, second_held)
    finally:
        _stop(procs)
    _assert_displaced(db, PRESSING, first, second)
    presses = [e for e in phone.events if e.kind == "long_press"]
    assert len(presses) == 1 and presses[0].time >= taken_at, "the press was not in flight at the takeover"
    with TrajectoryStore.open(db) as store:
        (episode,) = [e for e in store.list_episodes() if e.task == PRESSING]
        kinds = [s.action.kind if s.action else None for s in store.steps(episode.id)]
    assert kinds == [ActionKind.LAUNCH, ActionKind.LONG_PRESS], kinds  # the press it made, recorded and done
    assert ("key", "home") not in _inputs(phone)


@pytest.mark.parametrize("kind", list(ENDINGS))
def test_a_displaced_run_whose_next_reply_ends_the_episode_still_ends_interrupted(
    sim_farm, model, tmp_path, kind
):
    """The held reply is finish / answer / call_user: nothing to do on the phone, but the episode is no longer this
    process's to end as it likes: interrupted naming the new holder, exit 130 (the promise)."""
    farm = sim_farm(1, scenario="wechat_send")
    phone = farm.phones[farm.serials[0]]
    db = _db(tmp_path)
    task = ENDING.format(kind=kind)
    first_held = model.hold(task, turn=1)
    procs: list[subprocess.Popen] = []
    try:
        first = Proc(tmp_path, _args(farm, model, db, task), "first")
        procs.append(first.popen)
        _wait(first_held.reached.is_set, "the first to ask for its next action", procs)
        second, second_held, taken_at = _force_second(tmp_path, farm, model, db, first, procs)
        first_held.release.set()
        first_exit = first.popen.wait(WAIT_S)
        assert _holder_pid(db) == str(second.pid)  # never released by the first, whatever it did
        second_held.release.set()
        assert second.popen.wait(WAIT_S) == 0, second.stderr()
    finally:
        _stop(procs)
    assert _inputs(phone, since=taken_at) == [("key", "back")]
    assert first_exit == 130, f"exit {first_exit}: " + first.stderr()
    _assert_displaced(db, task, first, second)


@pytest.mark.parametrize("first_kind", ["run", "resume"])
def test_a_takeover_of_a_takeover_displaces_both_and_leaves_the_phone_to_the_last(
    sim_farm, model, tmp_path, first_kind
):
    farm = sim_farm(1, scenario="wechat_send")
    phone = farm.phones[farm.serials[0]]
    db = _db(tmp_path)
    task = FIRST if first_kind == "run" else ASKING
    first_held = model.hold(task, turn=1 if first_kind == "run" else 2)
    first_args = _displaced_args(first_kind, farm, model, db, tmp_path)
    second_held, third_held = model.hold(MIDDLE, turn=1), model.hold(THIRD, turn=1)
    procs: list[subprocess.Popen] = []
    try:
        first = Proc(tmp_path, first_args, "first")
        procs.append(first.popen)
        _wait(first_held.reached.is_set, "the first to ask for its next action", procs)
        second = Proc(tmp_path, _args(farm, model, db, MIDDLE, "--force"), "second")
        procs.append(second.popen)
        _wait(second_held.reached.is_set, "the second to act and ask again", procs)
        _wait(first.noticed, "the first to notice the first takeover", procs)  # so that it names the second
        taken_again_at = time.time()
        third = Proc(tmp_path, _args(farm, model, db, THIRD, "--force"), "third")
        procs.append(third.popen)
        _wait(third_held.reached.is_set, "the third to act and ask again", procs)
        _wait(second.noticed, "the second to notice the second takeover", procs)
        first_held.release.set()
        second_held.release.set()
        assert first.popen.wait(WAIT_S) == 130, first.stderr()
        assert second.popen.wait(WAIT_S) == 130, second.stderr()
        assert _holder_pid(db) == str(third.pid)
        third_held.release.set()
        assert third.popen.wait(WAIT_S) == 0, third.stderr()
    finally:
        _stop(procs)
    _assert_displaced(db, task, first, second)
    _assert_displaced(db, MIDDLE, second, third)
    assert _inputs(phone, since=taken_again_at) == [("key", "back")]  # only the third's
    assert _holder_pid(db) is None


@pytest.mark.parametrize("flag", ["--json", "--stop-u2-server"])
def test_a_displaced_run_with_an_output_or_cleanup_flag_keeps_its_promise(sim_farm, model, tmp_path, flag):
    farm = sim_farm(1, scenario="wechat_send")
    phone = farm.phones[farm.serials[0]]
    db = _db(tmp_path)
    first_held = model.hold(FIRST, turn=1)
    procs: list[subprocess.Popen] = []
    try:
        first = Proc(tmp_path, _args(farm, model, db, FIRST, flag), "first")
        procs.append(first.popen)
        _wait(first_held.reached.is_set, "the first to ask for its next action", procs)
        second, second_held, taken_at = _force_second(tmp_path, farm, model, db, first, procs)
        first_held.release.set()
        assert first.popen.wait(WAIT_S) == 130, first.stderr()
        assert _holder_pid(db) == str(second.pid)
        u2_after_first = phone.u2_running
        second_held.release.set()
        assert second.popen.wait(WAIT_S) == 0, second.stderr()
    finally:
        _stop(procs)
    _assert_displaced(db, FIRST, first, second)
    if flag == "--json":
        out = first.out.read_text().strip()
        assert out == "" or isinstance(json.loads(out), dict), out
    else:  # the displaced run must not stop the server the new holder is using
        stops = [
            e for e in phone.events if e.kind == "u2" and not e.detail.get("running") and e.time >= taken_at
        ]
        assert u2_after_first and not stops, stops
    assert _inputs(phone, since=taken_at) == [("key", "back")]


# ------------------------------------------------------------------------------------------------ the critic
CRITIC_TASK = "评审攻击：打开微信"
CRITIC_GUI = f"""task: {CRITIC_TASK}
turns:
  - action: {{kind: launch, app: 支付宝}}
  - action: {{kind: launch, app: 微信}}
  - action: {{kind: finish, text: 已打开}}
"""
SLACK_S = 5.0


def _critic_run(farm, model_url: str, critic_url: str, db: str, cwd: Path, *extra: str):
    started = time.monotonic()
    done = subprocess.run(
        [*CLI, "run", CRITIC_TASK, "--non-interactive", "--device", farm.serials[0]]
        + ["--adb", f"127.0.0.1:{farm.adb_port}", "--base-url", model_url, "--model", "sim", "--db", db]
        + ["--critic", critic_url, "--critic-model", "judge", *extra],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )
    return done, time.monotonic() - started


@pytest.fixture
def gui(tmp_path: Path) -> Iterator[SimModelServer]:
    folder = tmp_path / "gui"
    folder.mkdir()
    (folder / "script.yaml").write_text(CRITIC_GUI, encoding="utf-8")
    with SimModelServer(scripts=[folder], model_name="sim") as server:
        yield server


def _launched(phone) -> list[str]:
    return [e.detail["package"] for e in phone.events if e.kind == "launch"]


def test_a_critic_that_hangs_only_on_the_re_ask_after_wrong_ends_the_episode_as_timeout(
    sim_farm, gui, tmp_path
):
    farm = sim_farm(1, scenario="wechat_send")
    phone = farm.phones[farm.serials[0]]
    db = f"sqlite:///{tmp_path / 'store.db'}"
    script = JudgeScript(labels={"launch(支付宝)": "wrong"})
    with ScriptedJudgeServer(script, model="judge") as judge, HoldingEndpoint(judge.base_url) as critic:
        critic.hold(CRITIC_TASK, turn=1)  # the label of the re-asked proposal: never answered
        done, elapsed = _critic_run(farm, gui.base_url, critic.base_url, db, tmp_path, "--step-timeout", "6")
        asked = critic.seen.get(CRITIC_TASK, 0)
    assert asked == 2, f"the critic was asked {asked} times"
    assert done.returncode == 1, done.stdout + done.stderr
    assert "timeout" in done.stdout + done.stderr and "Traceback" not in done.stderr
    with TrajectoryStore.open(db) as store:
        (episode,) = store.list_episodes()
        assert episode.outcome == Outcome.TIMEOUT, episode.outcome_detail
        took = (episode.ended_at - episode.started_at).total_seconds()
        assert not any(s.action is not None for s in store.steps(episode.id))
        assert not any(info.busy() for info in phone_db.farm_devices(store))
    assert _launched(phone) == []
    assert took < 6 + SLACK_S, f"the episode took {took:.1f} s for a step limit of 6 s"


@pytest.mark.parametrize("fail_closed", [False, True], ids=["fail-open", "fail-closed"])
def test_a_critic_refusing_connections_behaves_as_before(sim_farm, gui, tmp_path, fail_closed):
    farm = sim_farm(1, scenario="wechat_send")
    phone = farm.phones[farm.serials[0]]
    db = f"sqlite:///{tmp_path / 'store.db'}"
    refused = f"http://127.0.0.1:{free_port()}/v1"
    extra = ["--timeout", "120", *(["--critic-fail-closed"] if fail_closed else [])]
    done, _ = _critic_run(farm, gui.base_url, refused, db, tmp_path, *extra)
    assert "Traceback" not in done.stderr, done.stderr
    with TrajectoryStore.open(db) as store:
        (episode,) = store.list_episodes()
        steps = store.steps(episode.id)
        assert not any(info.busy() for info in phone_db.farm_devices(store))
    if fail_closed:
        assert episode.outcome == "error:critic_unavailable", (episode.outcome, episode.outcome_detail)
        assert done.returncode not in (0, 130), done.stdout + done.stderr
        assert steps == [] and _launched(phone) == []
    else:
        assert done.returncode == 0, done.stdout + done.stderr
        assert episode.outcome == Outcome.FINISHED, episode.outcome_detail
        said = [d["reason"] for d in steps[0].guard_decisions if d["guard"] == "critic"]
        assert said and said[0].startswith("unavailable"), said
        assert _launched(phone) == ["com.eg.android.AlipayGphone", "com.tencent.mm"]  # unlabelled, all go


def test_a_slow_critic_within_the_step_deadline_does_not_time_out(sim_farm, gui, tmp_path):
    farm = sim_farm(1, scenario="wechat_send")
    phone = farm.phones[farm.serials[0]]
    db = f"sqlite:///{tmp_path / 'store.db'}"
    script = JudgeScript(labels={"launch(支付宝)": "wrong"}, delay_ms=2500)
    with ScriptedJudgeServer(script, model="judge") as judge:
        done, _ = _critic_run(farm, gui.base_url, judge.base_url, db, tmp_path, "--step-timeout", "10")
    assert done.returncode == 0, done.stdout + done.stderr
    with TrajectoryStore.open(db) as store:
        (episode,) = store.list_episodes()
        assert episode.outcome == Outcome.FINISHED, episode.outcome_detail
        first = store.steps(episode.id)[0]
        labels = [d["reason"].split(":")[0] for d in first.guard_decisions if d["guard"] == "critic"]
    assert labels == ["wrong", "correct"], labels
    assert _launched(phone) == ["com.tencent.mm"]
