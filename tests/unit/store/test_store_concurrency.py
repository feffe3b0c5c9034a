"""One store shared by many worker threads (and two stores on one file) on SQLite, without 'database is locked'."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from mobile_agent.actions import Action, Outcome
from mobile_agent.store.records import StepRecord
from mobile_agent.store.store import TrajectoryStore

WORKERS = 8
STEPS = 12


def run_worker(store: TrajectoryStore, worker: int, barrier: threading.Barrier, jpeg: bytes) -> str:
    episode = store.start_episode(f"task {worker}", device=f"phone-{worker}", family="venus", model="m")
    barrier.wait(timeout=30)  # all threads write at the same moment
    for index in range(STEPS):
        store.record_step(
            episode.id,
            StepRecord(index=index, action=Action.tap(worker, index), raw_reply="x" * 2000),
            screenshot=jpeg,
            hierarchy="<h/>",
        )
        store.list_episodes(limit=5)  # readers interleave with the writers
    store.finish_episode(episode.id, Outcome.FINISHED)
    return episode.id


def test_eight_threads_record_steps_on_one_store(store: TrajectoryStore, make_jpeg) -> None:
    barrier = threading.Barrier(WORKERS)
    with ThreadPoolExecutor(WORKERS) as pool:
        futures = [pool.submit(run_worker, store, w, barrier, make_jpeg(w)) for w in range(WORKERS)]
        ids = [f.result(timeout=120) for f in futures]
    for worker, episode_id in enumerate(ids):
        steps = store.steps(episode_id)
        assert [s.index for s in steps] == list(range(STEPS))
        assert all(s.action == Action.tap(worker, s.index) for s in steps)
        assert store.episode(episode_id).step_count == STEPS
    assert store.check_integrity() == []


def test_threads_on_two_stores_sharing_one_file(store: TrajectoryStore, store_root, make_jpeg) -> None:
    barrier = threading.Barrier(WORKERS)
    with TrajectoryStore.open(root=store_root) as second, ThreadPoolExecutor(WORKERS) as pool:
        stores = [store, second]
        futures = [pool.submit(run_worker, stores[w % 2], w, barrier, make_jpeg(w)) for w in range(WORKERS)]
        ids = [f.result(timeout=120) for f in futures]
    assert sorted(e.id for e in store.list_episodes(limit=None)) == sorted(ids)
    assert store.check_integrity() == []


def test_in_memory_sqlite_is_shared_by_threads(tmp_path, make_jpeg) -> None:
    with TrajectoryStore.open("sqlite://", root=tmp_path) as store:
        barrier = threading.Barrier(4)
        with ThreadPoolExecutor(4) as pool:
            ids = [
                f.result(timeout=60)
                for f in [pool.submit(run_worker, store, w, barrier, make_jpeg(w)) for w in range(4)]
            ]
        assert all(store.episode(i).step_count == STEPS for i in ids)
        assert (tmp_path / ids[0] / "000.jpg").is_file()
