"""Claims in index order on SQLite: the claim walks the partial index on pending rows (no temporary sort of the
backlog), a database made before those indexes gains them when opened, the phone a task last failed on gets it
only when nothing else is pending, and the requirement sets a pool passes in replace the claim's own look."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event, inspect

from mobile_agent.store import queue as q
from mobile_agent.store.store import TrajectoryStore

PENDING_INDEXES = {"ix_queue_tasks_pending", "ix_queue_tasks_pending_run"}


def tasks(n: int, **kw: Any) -> list[q.NewTask]:
    return [q.NewTask(seq=i, label=f"t:{i}", task=f"task {i}", **kw) for i in range(n)]


@contextmanager
def statements(store: TrajectoryStore) -> Iterator[list[tuple[str, Any]]]:
    seen: list[tuple[str, Any]] = []

    def record(_conn, _cursor, statement, parameters, _context, _many) -> None:
        seen.append((statement, parameters))

    event.listen(store._engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(store._engine, "before_cursor_execute", record)


def claim_selects(seen: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    return [(s, p) for s, p in seen if s.lstrip().startswith("SELECT") and "FROM queue_tasks" in s]


def test_the_claim_reads_the_pending_index_without_a_sort(store: TrajectoryStore) -> None:
    run = store.create_run("r")
    q.enqueue_tasks(store, run.id, tasks(3_000))
    for run_ids in ([run.id], None):
        with statements(store) as seen:
            assert q.claim_task(store, worker="w", device="d", tags=(), run_ids=run_ids, requires_keys=[""])
        [(statement, parameters)] = claim_selects(seen)  # no DISTINCT look: the keys were passed in
        with store._engine.connect() as conn:
            plan = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters).all()
        details = " | ".join(row[-1] for row in plan)
        assert "USING INDEX ix_queue_tasks_pending" in details, details
        assert "TEMP B-TREE" not in details, details


def test_a_database_made_before_the_indexes_gains_them_on_open(tmp_path: Path) -> None:
    with TrajectoryStore.open(root=tmp_path) as store:
        run = store.create_run("r")
        q.enqueue_tasks(store, run.id, tasks(3))
        path = store._engine.url.database
    with sqlite3.connect(path) as old:  # as an older mobile-agent left it
        for name in PENDING_INDEXES:
            old.execute(f"DROP INDEX {name}")
    with TrajectoryStore.open(root=tmp_path) as store:
        names = {index["name"] for index in inspect(store._engine).get_indexes("queue_tasks")}
        assert PENDING_INDEXES <= names
        assert q.claim_task(store, worker="w", device="d", tags=()).seq == 0


def test_the_last_phone_gets_its_failed_task_only_when_nothing_else_is_pending(
    store: TrajectoryStore,
) -> None:
    run = store.create_run("r")
    q.enqueue_tasks(store, run.id, [*tasks(1, priority=9), q.NewTask(seq=1, label="t:1", task="low")])
    top = q.claim_task(store, worker="w", device="a", tags=())
    assert top.seq == 0
    q.retry_task(store, top, failure=q.Failure.DEVICE, episode_id=None, outcome=None)
    with statements(store) as seen:
        other = q.claim_task(store, worker="w", device="a", tags=(), requires_keys=[""])
    assert other.seq == 1 and len(claim_selects(seen)) == 1  # lower priority, but not last failed on "a"
    with statements(store) as seen:
        again = q.claim_task(store, worker="w", device="a", tags=(), requires_keys=[""])
    assert again.seq == 0 and again.attempt == 2 and len(claim_selects(seen)) == 2  # the fallback look
    assert q.claim_task(store, worker="w", device="a", tags=()) is None


def test_requirement_sets_passed_in_are_the_only_ones_claimed(store: TrajectoryStore) -> None:
    run = store.create_run("r")
    q.enqueue_tasks(
        store,
        run.id,
        [
            q.NewTask(seq=0, label="a", task="needs wifi", requires=("wifi",), priority=5),
            q.NewTask(seq=1, label="b", task="needs root", requires=("root",), priority=3),
            q.NewTask(seq=2, label="c", task="anything"),
        ],
    )
    wifi, root = q.requires_key(["wifi"]), q.requires_key(["root"])
    # a phone without root is never given the root task, even when told the set is pending
    first = q.claim_task(store, worker="w", device="d", tags={"wifi"}, requires_keys=[root, "", wifi])
    assert first.label == "a"
    # a set the caller did not list (its snapshot is older than the task) waits for the next snapshot
    assert q.claim_task(store, worker="w", device="d", tags={"root"}, requires_keys=[""]).label == "c"
    assert q.claim_task(store, worker="w", device="d", tags={"root"}, requires_keys=[""]) is None
    assert q.claim_task(store, worker="w", device="d", tags={"root"}, requires_keys=[root]).label == "b"
    assert q.claim_task(store, worker="w", device="d", tags={"root"}, requires_keys=[]) is None
