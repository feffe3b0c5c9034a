"""The claim's plan on a real PostgreSQL server with a backlog: the query a claim sends is read back and EXPLAINed
after ANALYZE, and must walk a partial index on pending rows under LockRows, with no Sort of the backlog (the
old claim sorted every pending row by a CASE on last_device).

Server and private schema: the ``pg_url`` fixture of tests/conftest.py (env MOBILE_AGENT_TEST_PG; skips, saying
why, when the server cannot be reached).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text

from mobile_agent.store import queue as q
from mobile_agent.store.store import TrajectoryStore

pytestmark = pytest.mark.postgres

BACKLOG = 20_000


@contextmanager
def claim_statements(store: TrajectoryStore) -> Iterator[list[tuple[str, Any]]]:
    """The row-locking SELECTs the store sends while the block runs (statement, parameters)."""
    seen: list[tuple[str, Any]] = []

    def record(_conn, _cursor, statement, parameters, _context, _many) -> None:
        if "FOR UPDATE SKIP LOCKED" in statement and "queue_tasks" in statement:
            seen.append((statement, parameters))

    engine = store._engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


def plan_of(store: TrajectoryStore, statement: str, parameters: Any) -> list[str]:
    with store._engine.connect() as conn:
        raw = conn.connection.driver_connection
        rows = raw.execute(f"EXPLAIN {statement}", parameters).fetchall()
    return [row[0] for row in rows]


def nodes(plan: list[str]) -> list[str]:
    return [line.strip().removeprefix("->").strip() for line in plan]


@pytest.mark.parametrize("scope", ["one run", "all runs"])
def test_a_claim_walks_the_pending_index_without_sorting_the_backlog(
    pg_url: str, tmp_path: Path, scope: str
) -> None:
    with TrajectoryStore.open(pg_url, root=tmp_path) as store:
        run = store.create_run("plan")
        other = store.create_run("other")
        work = [q.NewTask(i, f"t:{i}", f"task {i}", priority=i % 3) for i in range(BACKLOG)]
        q.enqueue_tasks(store, run.id, work)
        q.enqueue_tasks(store, other.id, work[:2_000])
        done = q.claim_task(store, worker="w", device="d0", tags=set(), requires_keys=[""])
        assert done is not None and q.finish_task(store, done, episode_id=None, outcome="finished")
        with store._engine.begin() as conn:
            conn.execute(text("ANALYZE queue_tasks"))
        run_ids = [run.id] if scope == "one run" else None
        with claim_statements(store) as seen:
            claim = q.claim_task(
                store, worker="w", device="d1", tags={"x"}, run_ids=run_ids, requires_keys=["", "x"]
            )
        assert claim is not None and claim.spec == {} and claim.seq == 5  # the top priority, in file order
        assert len(seen) == 1, seen  # no second look: a task not last failed on d1 was there
        plan = nodes(plan_of(store, *seen[0]))
        joined = "\n".join(plan)
        assert plan[0].startswith("Limit"), joined
        assert plan[1].startswith("LockRows"), joined
        assert plan[2].startswith("Index Scan using ix_queue_tasks_pending"), joined
        assert not any(node.startswith(("Sort", "Incremental Sort", "Seq Scan")) for node in plan), joined


def test_the_fallback_to_the_last_phone_is_index_ordered_too(pg_url: str, tmp_path: Path) -> None:
    with TrajectoryStore.open(pg_url, root=tmp_path) as store:
        run = store.create_run("plan")
        q.enqueue_tasks(store, run.id, [q.NewTask(i, f"t:{i}", f"task {i}") for i in range(BACKLOG)])
        with store._engine.begin() as conn:  # every task last failed on d1: only the second look finds one
            conn.execute(text("UPDATE queue_tasks SET last_device = 'd1'"))
            conn.execute(text("ANALYZE queue_tasks"))
        with claim_statements(store) as seen:
            claim = q.claim_task(store, worker="w", device="d1", tags=set(), run_ids=[run.id])
        assert claim is not None and claim.seq == 0
        assert len(seen) == 2  # the first look found none; the second is read in index order too
        plan = nodes(plan_of(store, *seen[1]))
        joined = "\n".join(plan)
        assert plan[1].startswith("LockRows") and "Index Scan using ix_queue_tasks_pending" in plan[2], joined
        assert not any(node.startswith(("Sort", "Incremental Sort", "Seq Scan")) for node in plan), joined
