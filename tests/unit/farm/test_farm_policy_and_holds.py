"""Safety in batches without phones: which policy an episode runs under, needs_user episodes as results, phones
held for a person (paused, or being resumed) skipped by the pool, and the farm commands' safety options."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from farm_fakes import FakeRunner, make_phones

from mobile_agent.actions import Outcome
from mobile_agent.cli import farm as farm_cli
from mobile_agent.farm.inventory import PhoneEntry
from mobile_agent.farm.leases import hold_on
from mobile_agent.farm.scheduler.jobs import SchedulerConfig
from mobile_agent.farm.scheduler.policy import EpisodePolicies
from mobile_agent.farm.scheduler.pool import WorkerPool
from mobile_agent.farm.scheduler.summary import summarize_run
from mobile_agent.gate.policy import PolicyAction
from mobile_agent.store import pauses
from mobile_agent.store import phones as phone_db
from mobile_agent.store import queue as q
from mobile_agent.store import queue_status as qs
from mobile_agent.store.convert import now_utc
from mobile_agent.store.store import TrajectoryStore

FAST = SchedulerConfig(poll_s=0.02, heartbeat_s=0.2, probe_every_s=60, stall_s=2)
WECHAT = ["com.tencent.mm"]


# ----- which policy --------------------------------------------------------------------------------------------
def test_the_task_words_go_on_top_of_the_run_policy(store: TrajectoryStore) -> None:
    run = store.create_run("r", {"deny": ["send"], "policy": ["pay=allow"]})
    bare = store.create_run("bare", {})
    policies = EpisodePolicies(store)

    from_run = policies.for_task(run.id, {})
    assert from_run.decide("send", WECHAT)[0] is PolicyAction.DENY
    assert from_run.decide("pay", WECHAT)[0] is PolicyAction.ALLOW
    assert from_run.decide("delete", WECHAT)[0] is PolicyAction.ASK  # the default

    task = {"safety": {"policy": [], "allow": ["send@com.tencent.mm"], "deny": []}}
    with_task = policies.for_task(run.id, task)
    assert with_task.decide("send", WECHAT)[0] is PolicyAction.ALLOW  # the task's more specific rule
    assert with_task.decide("send", ["com.other"])[0] is PolicyAction.DENY  # the run's rule elsewhere
    assert policies.for_task(bare.id, {}).decide("send", WECHAT)[0] is PolicyAction.ASK


def test_the_command_policy_replaces_the_stored_one(store: TrajectoryStore) -> None:
    from mobile_agent.gate.policy import parse_policy

    run = store.create_run("r", {"allow": ["send@com.tencent.mm"]})
    policies = EpisodePolicies(store, parse_policy(["deny"]))
    assert policies.for_task(run.id, {}).decide("send", WECHAT)[0] is PolicyAction.DENY
    task = {"safety": {"allow": ["send@com.tencent.mm"]}}
    assert policies.for_task(run.id, task).decide("send", WECHAT)[0] is PolicyAction.ALLOW


# ----- paused episodes hold their phone ------------------------------------------------------------------------
class PausingRunner(FakeRunner):
    """Tasks whose seq is in ``pause_seqs`` end needs_user with a pause row, as the agent leaves them."""

    def __init__(self, store: TrajectoryStore, pause_seqs: set[int], reserve_s: float) -> None:
        super().__init__(
            store,
            lambda job: Outcome.NEEDS_USER if job.claim.seq in pause_seqs else Outcome.FINISHED,
            steps=1,
        )
        self.reserve_s = reserve_s
        self.paused: dict[str, pauses.PauseInfo] = {}  # phone serial -> its pause

    def run(self, job):
        result = super().run(job)
        if result.outcome == Outcome.NEEDS_USER:
            self.paused[job.phone.serial] = pauses.create_pause(
                self.store,
                pauses.PauseRecord(
                    episode_id=result.episode_id,
                    step_index=0,
                    kind="confirm",
                    question="send the message?",
                    device=job.phone.serial,
                    adb_server=job.phone.adb,
                    reserve_s=self.reserve_s,
                ),
            )
        return result


def run_pool(store, runner, phones, run_id, config=FAST) -> WorkerPool:
    events: list = []
    pool = WorkerPool(store, phones, runner, config=config, run_ids=[run_id], on_event=events.append)
    pool.events = events
    thread = threading.Thread(target=pool.run)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the pool did not finish"
    return pool


def enqueue(store: TrajectoryStore, n: int) -> str:
    run = store.create_run("r")
    q.enqueue_tasks(store, run.id, [q.NewTask(i, f"t:{i}", f"task {i}", priority=n - i) for i in range(n)])
    return run.id


def test_a_held_phone_gets_no_more_tasks_and_needs_user_is_a_result(store: TrajectoryStore) -> None:
    run_id = enqueue(store, 12)
    runner = PausingRunner(store, {0, 1}, reserve_s=600)
    pool = run_pool(store, runner, make_phones(3), run_id, replace(FAST, hold_s=1.0))

    tasks = {t.seq: t for t in qs.list_tasks(store, run_id)}
    assert qs.run_counts(store, run_id) == qs.RunCounts(done=10, expired=2)  # needing a person is never done
    assert all(t.attempts == 1 for t in tasks.values())  # needs_user is a result: never retried
    assert tasks[0].outcome == tasks[1].outcome == "needs_user:expired"  # nobody answered within the hold
    assert len(runner.paused) == 2  # two different phones paused
    held = [e for e in pool.events if e.kind == "waiting" and e.outcome == "held"]
    assert len(held) == 1  # a budget of 25 % of 3 phones: one of them, never both
    [held_phone] = [e.phone for e in held]
    pause = runner.paused[held_phone]
    on_phone = [job for job in runner.jobs if job.phone.serial == held_phone]
    assert on_phone[-1].claim.seq in (0, 1), f"{held_phone} was given a task while held for a person"

    summary = summarize_run(store, run_id)
    assert summary.by_outcome == {"needs_user:expired": 2, "finished": 10}
    assert summary.successes == 0 and summary.finished_unverified == 10  # no success either way
    assert sorted(summary.expired) == sorted(p.episode_id for p in runner.paused.values())
    assert summary.waiting == [] and summary.to_dict()["expired"] == summary.expired
    assert pause.episode_id in summary.expired
    assert len(store.list_episodes(run_id=run_id, limit=None)) == 12  # each recorded exactly once


def test_a_single_phone_is_never_held_and_its_question_expires(store: TrajectoryStore) -> None:
    run_id = enqueue(store, 3)
    runner = PausingRunner(store, {0}, reserve_s=600)
    pool = run_pool(store, runner, make_phones(1), run_id, replace(FAST, hold_s=0.5))
    assert qs.run_counts(store, run_id) == qs.RunCounts(done=2, expired=1)
    [pause] = runner.paused.values()
    later = [
        a for a in qs.list_attempts(store, run_id) if a.attempt == 1 and a.episode_id != pause.episode_id
    ]
    assert len(later) == 2  # the other tasks ran at once: one phone is always free for other work
    assert [e.outcome for e in pool.events if e.kind == "waiting"] == ["waiting"]
    assert summarize_run(store, run_id).by_outcome == {"needs_user:expired": 1, "finished": 2}


def test_a_phone_another_host_reserved_stalls_instead_of_waiting_for_people(store: TrajectoryStore) -> None:
    run_id = enqueue(store, 2)
    episode = store.start_episode("elsewhere", device="phone-0", family="f", model="m")
    store.finish_episode(episode.id, Outcome.NEEDS_USER)
    pauses.create_pause(
        store, pauses.PauseRecord(episode.id, 0, "confirm", "send?", device="phone-0", reserve_s=600)
    )
    pool = run_pool(store, FakeRunner(store), make_phones(1), run_id)  # FAST.stall_s = 2
    assert qs.run_counts(store, run_id) == qs.RunCounts(pending=2)
    assert [w.status for w in pool.workers] == ["stopped"]


# ----- who holds a phone ---------------------------------------------------------------------------------------
def test_person_holds_paused_then_resumed_then_released(store: TrajectoryStore) -> None:
    episode = store.start_episode("send", device="phone-0", family="f", model="m")
    store.finish_episode(episode.id, Outcome.NEEDS_USER)
    pause = pauses.create_pause(
        store,
        pauses.PauseRecord(
            episode.id, 3, "confirm", "send?", device="phone-0", reserve_s=60, adb_server=None
        ),
    )
    [hold] = phone_db.person_holds(store)
    assert (hold.serial, hold.episode_id, hold.how) == ("phone-0", episode.id, "paused")
    assert hold_on(PhoneEntry("phone-0", adb="10.0.0.2:5037"), [hold]) is hold  # no server recorded: any
    assert hold_on(PhoneEntry("phone-1"), [hold]) is None

    pauses.reopen_episode(store, episode.id)
    pauses.mark_resumed(store, pause.id, "yes")
    [hold] = phone_db.person_holds(store)
    assert hold.how == "resumed"  # `mobile-agent resume` is driving the phone
    assert phone_db.person_holds(store, now=hold.until + timedelta(seconds=1)) == []  # a dead resume lets go

    store.finish_episode(episode.id, Outcome.FINISHED)
    assert phone_db.person_holds(store) == []


def test_a_hold_matches_the_phone_on_its_own_adb_server(store: TrajectoryStore) -> None:
    hold = phone_db.PersonHold("emulator-5554", "127.0.0.1:05037", "ep", now_utc(), "paused")
    assert hold_on(PhoneEntry("emulator-5554", adb="127.0.0.1:5037"), [hold]) is hold
    assert hold_on(PhoneEntry("emulator-5554", adb="10.0.0.9:5037"), [hold]) is None
    garbled = phone_db.PersonHold("emulator-5554", "no port here", "ep", now_utc(), "paused")
    assert hold_on(PhoneEntry("emulator-5554", adb="127.0.0.1:5037"), [garbled]) is None


# ----- the commands --------------------------------------------------------------------------------------------
def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as caught:
        farm_cli.main(list(argv))
    out = capsys.readouterr()
    return caught.value.code, out.out, out.err


def test_bad_safety_words_are_user_errors(capsys, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'x.db'}"
    tasks = tmp_path / "t.jsonl"
    tasks.write_text('"open settings"\n', encoding="utf-8")
    for command in ("batch", "submit"):
        code, _, err = run_cli(capsys, command, str(tasks), "--db", db, "--allow", "sned@com.tencent.mm")
        assert code == 2 and "sned" in err and "hint:" in err and "Traceback" not in err
    code, _, err = run_cli(capsys, "worker", "--db", db, "--policy", "maybe")
    assert code == 2 and "maybe" in err
    with TrajectoryStore.open(db) as store:
        assert store.list_runs() == []  # nothing was submitted


def test_submit_stores_the_policy_with_the_run(capsys, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'x.db'}"
    tasks = tmp_path / "t.jsonl"
    tasks.write_text('"open settings"\n', encoding="utf-8")
    code, out, _ = run_cli(
        capsys, "submit", str(tasks), "--db", db, "--allow", "send@com.tencent.mm", "--deny", "pay", "--json"
    )
    assert code == 0
    with TrajectoryStore.open(db) as store:
        run = store.run(json.loads(out)["run_id"])
        assert run.config["allow"] == ["send@com.tencent.mm"] and run.config["deny"] == ["pay"]
        assert "policy" not in run.config
        policy = EpisodePolicies(store).for_task(run.id, {})
    assert policy.decide("send", WECHAT)[0] is PolicyAction.ALLOW
    assert policy.decide("pay", WECHAT)[0] is PolicyAction.DENY
