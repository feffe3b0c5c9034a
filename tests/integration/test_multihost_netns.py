"""A farm across three hosts for real: each host a Linux network namespace with its own adb server, simulated
phones, model endpoint and `worker` (with a hostname of its own), all on one PostgreSQL reached over veth links
(tests/integration/netns_hosts.py builds them and always takes them down).

- kill -9 every process of one host mid-batch: the other hosts take its tasks over exactly once; every task is
  done once and every message is sent once, counted on the phones themselves;
- cut one host off the database (`ip link set <veth> down`) while its episodes wait for the answer that taps 发送:
  nothing happens on its phones from the moment its lease passes to another host, its cut-off episodes get no
  further step, every step carries the lease epoch it was written under, every message is sent once, and the
  cut-off worker says so without a traceback; with the link back, the same worker takes work again. The scenario
  runs once (the ``partition`` fixture) and is read by the tests after it.

Each host's episodes are parked where it matters: its model answers the turn that taps 发送 late, so a kill or a
cut lands after the message was typed and before it was sent. Needs root, `ip netns` and the local PostgreSQL
(every test skips, saying why, without them)."""

from __future__ import annotations

import signal
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import text

from mobile_agent.farm.scheduler.jobs import outcome_failure
from mobile_agent.farm.scheduler.runs import submit
from mobile_agent.store import queue as q
from mobile_agent.store import queue_status as qs
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.store import TrajectoryStore
from tests.integration import netns_hosts as nh

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

LEASE_S = 10.0  # the farm's lease in these tests (netns_worker.py); the product's is 60 s
ALLOW_SEND = {"allow": ["send@com.tencent.mm"]}
WORKER_ARGS = ("--reset", "force-stop", "--reserve", "5")


@pytest.fixture
def lab(pg_url: str, tmp_path: Path) -> Iterator[nh.Lab]:
    reason = nh.unavailable()
    if reason:
        pytest.skip(reason)
    made = nh.Lab(tmp_path, pg_url)
    try:
        yield made
    finally:
        made.close()


def wait_for(check: Callable[[], bool], timeout: float, what: str, lab: nh.Lab) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    pytest.fail(f"{what} within {timeout:.0f} s\n{lab.log_tail()}")


def parked(host: nh.Host, phones: int) -> bool:
    """Every phone of ``host`` has asked for its send and waits for the (late) answer."""
    assert host.model is not None
    return host.model.in_flight >= phones


def host_of(lab: nh.Lab, worker: str | None) -> str | None:
    for host in lab.hosts:
        if worker and worker.startswith(f"{host.hostname}:"):
            return host.name
    return None


def successes(store: TrajectoryStore, run_id: str) -> dict[int, list[str]]:
    """task id -> the episodes that ended with a result (not an infrastructure failure)."""
    found: dict[int, list[str]] = {}
    for episode in store.list_episodes(run_id=run_id, limit=None):
        if episode.outcome is not None and outcome_failure(episode.outcome) is None:
            found.setdefault(int(episode.meta["queue_task"]), []).append(episode.id)
    return found


def touches(host: nh.Host, since: float, until: float = float("inf")) -> list[tuple[str, str, float]]:
    """Everything that happened on ``host``'s phones in [since, until): (serial, event kind, time)."""
    return [
        (serial, event.kind, event.time)
        for serial, phone in host.phones.items()
        for event in list(phone.events)
        if since <= event.time < until
    ]


def assert_nothing_listens_outside(lab: nh.Lab) -> None:
    allowed = {f"{f.address[0]}:{f.address[1]}" for f in lab.forwarders}
    assert set(lab.root_listeners()) <= allowed, "a socket of the test listens outside the namespaces"


def test_a_killed_host_s_tasks_are_taken_over_exactly_once_by_the_others(
    lab: nh.Lab, pg_url: str, tmp_path: Path
) -> None:
    labels = [f"k{i:02d}" for i in range(12)]
    quick = nh.write_send_scripts(tmp_path / "quick", labels)
    late = nh.write_send_scripts(tmp_path / "late", labels, park_ms=60_000)
    victim = lab.add_host("a", phones=2, scripts=late, scenario="wechat_send")
    others = [lab.add_host(n, phones=2, scripts=quick, scenario="wechat_send") for n in ("b", "c")]
    assert_nothing_listens_outside(lab)

    with TrajectoryStore.open(pg_url, root=lab.shots) as store:
        run = submit(store, nh.write_tasks(tmp_path / "tasks.jsonl", labels), config=ALLOW_SEND)
        workers = {
            h.name: lab.start_worker(h, "--run", run.id, *WORKER_ARGS, lease_s=LEASE_S)
            for h in (victim, *others)
        }
        wait_for(lambda: parked(victim, 2), 60, "host a's phones did not both reach the send", lab)
        held = [t for t in qs.list_tasks(store, run.id) if host_of(lab, t.worker) == "a"]
        assert len(held) == 2, [(t.id, t.state, t.worker) for t in held]
        killed_at = time.time()
        killed = victim.kill()
        assert len(killed) >= 2  # the worker and the adb server

        for name, proc in workers.items():
            if name == "a":
                continue
            try:
                assert proc.wait(90) == 0, lab.log_tail()
            except Exception:
                pytest.fail(f"host {name}'s worker did not finish the run\n{lab.log_tail()}")

        # 0 lost tasks: every task done, each by exactly one episode with a result.
        assert qs.run_counts(store, run.id) == qs.RunCounts(done=len(labels))
        done = successes(store, run.id)
        assert sorted(done) == sorted(t.id for t in qs.list_tasks(store, run.id))
        assert {len(v) for v in done.values()} == {1}
        # The dead host's tasks: taken over once (a second attempt, never a third) by a live host.
        attempts = qs.list_attempts(store, run.id)
        for task in held:
            tries = [a for a in attempts if a.task_id == task.id]
            assert [host_of(lab, a.worker) for a in tries][0] == "a"
            assert len(tries) == 2 and host_of(lab, tries[1].worker) in ("b", "c"), (tries, lab.log_tail())
            assert tries[0].failure is q.Failure.ABANDONED  # the claim lapsed: the worker stopped
        for episode in store.list_episodes(run_id=run.id, limit=None):
            assert episode.status is EpisodeStatus.ENDED
            if host_of(lab, episode.meta.get("worker")) == "a":
                assert episode.outcome == "interrupted"
        assert store.check_integrity() == []

    # 0 duplicate actions, read off the phones: every message sent once, none by the dead host's phones.
    sent = lab.messages()
    assert sorted(text for _, _, text in sent) == sorted(nh.message_text(label) for label in labels)
    assert not [m for m in sent if m[0] == "a"]
    assert touches(victim, since=killed_at) == []
    for host in others:  # the live hosts took over without a fault of their own
        assert "Traceback" not in host.logs[0].read_text("utf-8", errors="replace"), lab.log_tail()


# ------------------------------------------------------------------------------------------------ partition
@dataclass
class Partition:
    """What happened when host b was cut off the database mid-batch, then let back, then given work of its own."""

    lab: nh.Lab
    url: str
    run_id: str
    rejoin_run_id: str
    held: list[int]  # the tasks b had claimed when it was cut
    stale: list[str]  # b's episodes in flight when it was cut
    b_worker: str  # b's worker id before the cut
    b_alive_at_rejoin: bool
    cut_at: float
    passed_at: float  # when the first of b's tasks was claimed by another host: its lease had passed
    restored_at: float
    rejoin_at: float
    steps_when_passed: dict[str, list[tuple[int, str | None]]]
    labels: list[str]
    again: list[str]


@pytest.fixture(scope="module")
def partition(module_pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Partition]:
    reason = nh.unavailable()
    if reason:
        pytest.skip(reason)
    tmp = tmp_path_factory.mktemp("partition")
    lab = nh.Lab(tmp, module_pg_url)
    try:
        yield _cut_and_rejoin(lab, module_pg_url, tmp)
    finally:
        lab.close()


def _cut_and_rejoin(lab: nh.Lab, url: str, tmp: Path) -> Partition:
    labels = [f"p{i:02d}" for i in range(6)]
    again = [f"r{i:02d}" for i in range(4)]
    quick = nh.write_send_scripts(tmp / "quick", labels + again)
    late = nh.write_send_scripts(
        tmp / "late", labels, park_ms=3_000
    )  # the send's answer comes during the cut
    nh.write_send_scripts(late, again, prefix="again")  # after the rejoin: at once
    cut_host = lab.add_host("b", phones=2, scripts=late, scenario="wechat_send")
    others = [lab.add_host(n, phones=2, scripts=quick, scenario="wechat_send") for n in ("a", "c")]
    assert_nothing_listens_outside(lab)

    with TrajectoryStore.open(url, root=lab.shots) as store:
        run = submit(store, nh.write_tasks(tmp / "tasks.jsonl", labels), config=ALLOW_SEND)
        workers = [
            lab.start_worker(h, "--forever", *WORKER_ARGS, lease_s=LEASE_S) for h in (cut_host, *others)
        ]
        wait_for(lambda: parked(cut_host, 2), 60, "host b's phones did not both reach the send", lab)
        held = [t.id for t in qs.list_tasks(store, run.id) if host_of(lab, t.worker) == "b"]
        running = store.list_episodes(run_id=run.id, status=EpisodeStatus.RUNNING, limit=None)
        stale = [e.id for e in running if host_of(lab, e.meta.get("worker")) == "b"]
        assert len(held) == 2 and len(stale) == 2, (held, stale)
        b_worker = store.episode(stale[0]).meta["worker"]
        cut_at = time.time()
        cut_host.cut()

        # The lease passes: the other hosts take b's tasks over and finish the run.
        wait_for(
            lambda: qs.run_counts(store, run.id).done == len(labels),
            60,
            "the other hosts did not take over host b's tasks",
            lab,
        )
        retries = [a for a in qs.list_attempts(store, run.id) if a.task_id in held and a.attempt > 1]
        passed_at = min(a.started_at for a in retries).timestamp()
        steps_when_passed = {eid: [(s.index, s.status) for s in store.steps(eid)] for eid in stale}
        time.sleep(2)  # b has had the answer to its send for a while now, with no database to write it to
        restored_at = time.time()
        cut_host.restore()

        # Whatever b still had in hand meets the database again and ends; then work only b's phones can take.
        wait_for(
            lambda: all(store.episode(eid).status is EpisodeStatus.ENDED for eid in stale),
            60,
            "host b's cut-off episodes did not end",
            lab,
        )
        time.sleep(LEASE_S / 2)
        alive = workers[0].poll() is None
        rejoin_at = time.time()
        pinned = nh.write_tasks(tmp / "again.jsonl", again, requires={"host": "b"})
        run2 = submit(store, pinned, config=ALLOW_SEND)
        wait_for(
            lambda: qs.run_counts(store, run2.id).done == len(again), 60, "host b took no work again", lab
        )
    for proc in workers:
        proc.send_signal(signal.SIGTERM)
    for proc in workers:
        proc.wait(30)
    return Partition(
        lab,
        url,
        run.id,
        run2.id,
        held,
        stale,
        b_worker,
        alive,
        cut_at,
        passed_at,
        restored_at,
        rejoin_at,
        steps_when_passed,
        labels,
        again,
    )


def test_a_host_cut_off_the_database_stops_before_its_lease_passes_and_nothing_is_done_twice(
    partition: Partition,
) -> None:
    p, b = partition, partition.lab.hosts[0]
    assert p.cut_at < p.passed_at < p.restored_at  # the lease passed while b was cut off
    # Fencing, on the phones: nothing happened on b's phones from the moment its lease could first have passed (its
    # last renewal, at most one heartbeat before the cut, plus the lease) until it was given new work, though the
    # answer to its send arrived during the cut and the link came back before that.
    could_pass = min(p.passed_at, p.cut_at + LEASE_S - LEASE_S / 6)
    assert touches(b, since=could_pass, until=p.rejoin_at) == []
    # ... and in the store: b's cut-off episodes got no step, and no step completed, once the lease had passed.
    with TrajectoryStore.open(p.url, root=p.lab.shots) as store:
        assert {
            eid: [(s.index, s.status) for s in store.steps(eid)] for eid in p.stale
        } == p.steps_when_passed
        for eid in p.stale:
            assert store.episode(eid).outcome == "interrupted"
        done = successes(store, p.run_id)
        assert sorted(done) == sorted(t.id for t in qs.list_tasks(store, p.run_id))
        assert {len(v) for v in done.values()} == {1}
        for task_id in p.held:
            (episode_id,) = done[task_id]
            assert host_of(p.lab, store.episode(episode_id).meta.get("worker")) in ("a", "c")
        assert store.check_integrity() == []
    # No action twice, counted on the phones: every message of both runs sent exactly once.
    sent = Counter(text for _, _, text in p.lab.messages())
    assert sent == Counter(nh.message_text(label) for label in p.labels + p.again)


def test_a_host_whose_link_comes_back_takes_work_again(partition: Partition) -> None:
    p = partition
    assert p.b_alive_at_rejoin, "host b's worker exited during the cut"
    with TrajectoryStore.open(p.url, root=p.lab.shots) as store:
        assert qs.run_counts(store, p.rejoin_run_id) == qs.RunCounts(done=len(p.again))
        episodes = [store.episode(e) for v in successes(store, p.rejoin_run_id).values() for e in v]
        assert len(episodes) == len(p.again)
        assert {e.meta.get("worker") for e in episodes} == {p.b_worker}  # the same worker, rejoined
    b = p.lab.hosts[0]
    assert sorted(text for host, _, text in p.lab.messages() if host == "b") == sorted(
        nh.message_text(label) for label in p.again
    )
    assert touches(b, since=p.rejoin_at)


def test_every_step_carries_the_lease_epoch_it_was_written_under(partition: Partition) -> None:
    """The store's own proof that no step was recorded by a worker that had lost its lease."""
    query = text(
        'SELECT s.episode_id, s."index", s.lease_epoch, e.lease_epoch FROM steps s '
        "JOIN episodes e ON e.id = s.episode_id WHERE e.run_id IN (:one, :two)"
    )
    with (
        TrajectoryStore.open(partition.url, root=partition.lab.shots) as store,
        store.read_connection() as conn,
    ):
        rows = list(conn.execute(query, {"one": partition.run_id, "two": partition.rejoin_run_id}))
    assert rows
    for episode_id, index, step_epoch, episode_epoch in rows:
        assert step_epoch is not None, f"step {index} of {episode_id} has no lease epoch"
        assert step_epoch <= (episode_epoch or 1)
    stale = {r[2] for r in rows if r[0] in partition.stale}
    assert len(stale) == 1  # b wrote every step of its cut-off episodes under the one epoch it held


def test_the_cut_off_host_says_so_in_one_line_each_way_without_tracebacks(partition: Partition) -> None:
    log = partition.lab.hosts[0].logs[0].read_text("utf-8", errors="replace")
    assert "Traceback" not in log
    lines = log.splitlines()
    assert len([line for line in lines if "store unreachable" in line]) == 1, log
    assert len([line for line in lines if "store back after" in line]) == 1, log
