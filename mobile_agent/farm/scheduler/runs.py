"""A run's life: submit a task file as a new run, and settle its status when a pool stops."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mobile_agent.farm.tasks import load_tasks, to_new_tasks
from mobile_agent.store import queue as q
from mobile_agent.store import queue_status as qs
from mobile_agent.store.records import RunInfo, RunStatus
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)


def submit(
    store: TrajectoryStore, tasks_path: str | Path, *, name: str | None = None, config: Mapping[str, Any] = ()
) -> RunInfo:
    """Create a run and enqueue every task of the file (times its repeats). Returns the run."""
    loaded = load_tasks(tasks_path)
    rows = to_new_tasks(loaded)
    run = store.create_run(
        name or Path(tasks_path).name, {"tasks_file": str(Path(tasks_path).resolve()), **dict(config)}
    )
    q.enqueue_tasks(store, run.id, rows)
    log.info("run %s: %d task(s) enqueued from %s", run.id, len(rows), tasks_path)
    return run


def finish_run_status(store: TrajectoryStore, run_id: str, *, interrupted: bool) -> RunInfo:
    counts = qs.run_counts(store, run_id)
    if interrupted:
        status = RunStatus.INTERRUPTED
    elif counts.open == 0:
        status = RunStatus.ENDED
    else:
        status = RunStatus.RUNNING  # tasks left (stalled); `--resume` or a worker can finish them
    if status is RunStatus.RUNNING:
        return store.run(run_id)
    return store.finish_run(run_id, status)
