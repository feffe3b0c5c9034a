"""check_integrity finds what can go wrong between rows and files, and stays quiet on a healthy store."""

from __future__ import annotations

import sqlite3

from sqlalchemy import delete, update

from mobile_agent.actions import Action, Outcome
from mobile_agent.store.records import StepRecord
from mobile_agent.store.schema import EpisodeRow, StepRow
from mobile_agent.store.store import TrajectoryStore


def recorded_episode(store: TrajectoryStore, make_jpeg, steps: int = 3):
    episode = store.start_episode("t", device="d", family="venus", model="m")
    for index in range(steps):
        store.record_step(
            episode.id,
            StepRecord(index=index, action=Action.wait()),
            screenshot=make_jpeg(index),
            hierarchy="<h/>",
        )
    store.finish_episode(episode.id, Outcome.FINISHED)
    return episode


def test_healthy_store_has_no_problems(store: TrajectoryStore, make_jpeg) -> None:
    recorded_episode(store, make_jpeg)
    store.start_episode("still going", device="d2", family="venus", model="m")
    assert store.check_integrity() == []


def test_corrupted_screenshot_is_found(store: TrajectoryStore, make_jpeg) -> None:
    episode = recorded_episode(store, make_jpeg)
    path = store.screenshot_path(store.step(episode.id, 1))
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF  # same size, different content: only the hash can tell
    path.write_bytes(bytes(data))
    assert store.check_integrity() == [
        f"episode {episode.id} step 1: screenshot {episode.id}/001.jpg does not match its sha256"
    ]
    assert store.check_integrity(verify_hashes=False) == []


def test_missing_and_truncated_files_are_found(store: TrajectoryStore, make_jpeg) -> None:
    episode = recorded_episode(store, make_jpeg)
    (store.root / episode.id / "000.jpg").unlink()
    (store.root / episode.id / "002.jpg").write_bytes(b"\xff\xd8\xff")
    (store.root / episode.id / "001.xml").unlink()
    problems = store.check_integrity()
    assert f"episode {episode.id} step 0: screenshot {episode.id}/000.jpg is missing" in problems
    assert f"episode {episode.id} step 1: hierarchy file {episode.id}/001.xml is missing" in problems
    assert any(p.startswith(f"episode {episode.id} step 2: screenshot") and "3 bytes" in p for p in problems)
    assert len(problems) == 3


def test_gap_in_step_indices_and_wrong_count(store: TrajectoryStore, make_jpeg) -> None:
    episode = recorded_episode(store, make_jpeg, steps=4)
    with store.write_session() as session:
        session.execute(delete(StepRow).where(StepRow.episode_id == episode.id, StepRow.index.in_([1, 2])))
    (store.root / episode.id / "001.jpg").unlink()
    (store.root / episode.id / "001.xml").unlink()
    (store.root / episode.id / "002.jpg").unlink()
    (store.root / episode.id / "002.xml").unlink()
    assert store.check_integrity() == [
        f"episode {episode.id}: gap in step indices, missing 1, 2",
        f"episode {episode.id}: step count says 4 but 2 steps are stored",
    ]


def test_ended_without_outcome_and_running_with_one(store: TrajectoryStore) -> None:
    a = store.start_episode("a", device="d", family="f", model="m")
    b = store.start_episode("b", device="d", family="f", model="m")
    with store.write_session() as session:
        session.execute(update(EpisodeRow).where(EpisodeRow.id == a.id).values(status="ended"))
        session.execute(update(EpisodeRow).where(EpisodeRow.id == b.id).values(outcome="finished"))
    problems = store.check_integrity()
    assert f"episode {a.id}: ended without an outcome" in problems
    assert f"episode {a.id}: ended without an end time" in problems
    assert f"episode {b.id}: still running but has outcome 'finished'" in problems
    assert len(problems) == 3


def test_orphan_files_directories_and_leftover_temp_files(store: TrajectoryStore, make_jpeg) -> None:
    episode = recorded_episode(store, make_jpeg, steps=1)
    (store.root / episode.id / "007.jpg").write_bytes(make_jpeg(7))
    (store.root / episode.id / ".tmp-abc123").write_bytes(b"half")
    (store.root / "0123456789ab").mkdir()
    (store.root / "report").mkdir()  # not an episode directory: none of the check's business
    (store.root / "notes.txt").write_text("mine")
    assert store.check_integrity() == [
        f"leftover temporary file {episode.id}/.tmp-abc123 (a write was interrupted)",
        f"orphan file {episode.id}/007.jpg: no step refers to it",
        "orphan directory 0123456789ab/: no episode with that id",
    ]


def test_orphan_rows_written_behind_the_stores_back(store: TrajectoryStore, store_root, make_jpeg) -> None:
    """Another tool with foreign keys off can leave steps without an episode and episodes without a run."""
    run = store.create_run("r", {})
    episode = store.start_episode("t", device="d", family="f", model="m", run_id=run.id)
    store.record_step(episode.id, StepRecord(index=0))
    keep = recorded_episode(store, make_jpeg, steps=1)
    raw = sqlite3.connect(store_root / "mobile_agent.db")
    try:
        raw.execute("PRAGMA foreign_keys = OFF")
        raw.execute("DELETE FROM episodes WHERE id = ?", (episode.id,))
        raw.execute("UPDATE episodes SET run_id = 'feedfeedfeed', outcome = 'great' WHERE id = ?", (keep.id,))
        raw.commit()
    finally:
        raw.close()
    problems = store.check_integrity()
    assert f"1 orphan step(s) of unknown episode {episode.id}" in problems
    assert f"episode {keep.id}: orphan, its run feedfeedfeed does not exist" in problems
    assert f"episode {keep.id}: unknown outcome 'great'" in problems
    assert store.episode(keep.id).outcome is None  # readers survive a bad value; the check reports it
    assert len(problems) == 3
