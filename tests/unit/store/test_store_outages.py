"""A store that goes away for a while (mobile_agent.store.outages) and fencing (lease epochs on steps): a SQLite file
locked past its busy timeout is waited out with one line when it goes and one when it returns; past the bound the
call fails in one line; a step written under a stale lease epoch is refused; a schema-2 database upgrades."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time

import pytest
from sqlalchemy import text

from mobile_agent.actions import Action
from mobile_agent.store import engine as store_engine
from mobile_agent.store.intents import complete_step
from mobile_agent.store.outages import (
    LeaseLapsing,
    Outage,
    StoreInterrupted,
    StoreUnavailable,
    retried,
    wait_bound,
)
from mobile_agent.store.owners import DONE, INTENT, claim_episode
from mobile_agent.store.records import StepRecord
from mobile_agent.store.schema import SCHEMA_VERSION
from mobile_agent.store.step_writes import FencedOut
from mobile_agent.store.store import TrajectoryStore


def _lock_for(path, seconds: float) -> threading.Thread:
    """Another process's exclusive lock on the file for ``seconds`` (taken before this returns)."""
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")

    def release() -> None:
        time.sleep(seconds)
        holder.execute("ROLLBACK")
        holder.close()

    thread = threading.Thread(target=release, daemon=True)
    thread.start()
    return thread


def test_a_lock_longer_than_the_busy_timeout_is_waited_out_with_one_line_each_way(
    tmp_path, monkeypatch, caplog, make_jpeg
):
    monkeypatch.setattr(store_engine, "SQLITE_BUSY_TIMEOUT_MS", 100)
    monkeypatch.setenv("MOBILE_AGENT_STORE_OUTAGE_S", "30")
    path = tmp_path / "mobile_agent.db"
    with TrajectoryStore.open(f"sqlite:///{path}") as store:
        episode = store.start_episode("t", device="d", family="ui-venus-2", model="m")
        caplog.set_level(logging.WARNING, logger="mobile_agent.store.outages")
        release = _lock_for(path, 1.0)
        started = time.monotonic()
        store.record_step(
            episode.id, StepRecord(index=0, action=Action.press("back")), screenshot=make_jpeg(0)
        )
        waited = time.monotonic() - started
        release.join()
        assert waited >= 0.5  # it did wait for the lock to go (the busy timeout alone is 0.1 s)
        assert [s.index for s in store.steps(episode.id)] == [0]
        lines = [r.getMessage() for r in caplog.records]
        assert len([m for m in lines if m.startswith("store unreachable")]) == 1, lines
        assert len([m for m in lines if m.startswith("store back after")]) == 1, lines
        assert not any(r.exc_info for r in caplog.records)  # no tracebacks


def test_past_the_bound_a_call_fails_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(store_engine, "SQLITE_BUSY_TIMEOUT_MS", 100)
    monkeypatch.setenv("MOBILE_AGENT_STORE_OUTAGE_S", "0.5")
    path = tmp_path / "mobile_agent.db"
    with TrajectoryStore.open(f"sqlite:///{path}") as store:
        release = _lock_for(path, 1.5)
        with pytest.raises(StoreUnavailable) as caught:
            store.start_episode("t", device="d", family="ui-venus-2", model="m")
        release.join()
        assert "unreachable" in caught.value.message and caught.value.hint
        assert "\n" not in caught.value.one_line()
        store.start_episode("t", device="d", family="ui-venus-2", model="m")  # back: works


def test_retried_runs_a_call_again_after_the_store_broke_it_part_way():
    class FakeStore:
        outage = Outage("test", bound_s=5)

    calls = []

    @retried
    def write(store: FakeStore) -> str:
        calls.append(1)
        if len(calls) < 3:
            raise StoreInterrupted("the store failed: server closed the connection")
        return "ok"

    assert write(FakeStore()) == "ok" and len(calls) == 3


def test_a_step_under_a_stale_lease_epoch_is_refused(tmp_path, make_jpeg):
    path = tmp_path / "mobile_agent.db"
    with (
        TrajectoryStore.open(f"sqlite:///{path}") as first,
        TrajectoryStore.open(f"sqlite:///{path}") as second,
    ):
        episode = first.start_episode("t", device="d", family="ui-venus-2", model="m")
        first.record_step(episode.id, StepRecord(index=0, action=Action.press("back"), status=INTENT))
        assert first.steps(episode.id)[0].lease_epoch == 1
        assert claim_episode(second, episode.id) == 2  # another process takes the episode over
        with pytest.raises(FencedOut):
            complete_step(first, episode.id, 0, DONE)  # the old holder cannot even complete its intent
        with pytest.raises(FencedOut):
            first.record_step(
                episode.id, StepRecord(index=1, action=Action.press("back")), screenshot=make_jpeg(1)
            )
        assert not (first.root / episode.id / "001.jpg").exists()  # nor leave its files
        second.record_step(episode.id, StepRecord(index=1, action=Action.press("back")))
        steps = second.steps(episode.id)
        assert [(s.index, s.lease_epoch, s.status) for s in steps] == [(0, 1, INTENT), (1, 2, None)]
        assert second.episode(episode.id).lease_epoch == 2


def test_a_schema_2_database_upgrades_to_lease_epochs(tmp_path):
    path = tmp_path / "mobile_agent.db"
    with TrajectoryStore.open(f"sqlite:///{path}") as store:
        old = store.start_episode("t", device="d", family="ui-venus-2", model="m")
        store.record_step(old.id, StepRecord(index=0, action=Action.press("back")))
    with sqlite3.connect(path) as connection:  # as version 2 wrote it
        connection.execute("ALTER TABLE steps DROP COLUMN lease_epoch")
        connection.execute("ALTER TABLE episodes DROP COLUMN lease_epoch")
        connection.execute("UPDATE schema_info SET value = '2' WHERE key = 'schema_version'")
    with TrajectoryStore.open(f"sqlite:///{path}") as store:
        with store.read_session() as session:
            assert session.execute(text("SELECT value FROM schema_info")).scalar() == str(SCHEMA_VERSION)
        assert store.episode(old.id).lease_epoch == 1  # an old row reads as epoch 1
        assert store.steps(old.id)[0].lease_epoch is None
        claim_episode(store, old.id)
        store.record_step(old.id, StepRecord(index=1, action=Action.press("back")))
        assert store.steps(old.id)[1].lease_epoch == 2


def test_a_thread_whose_lease_would_lapse_stops_waiting_first(tmp_path, monkeypatch):
    """A worker's episode waits for the store only while its lease surely holds (LeaseLapsing), well before the
    store's own bound, so it never touches the phone after its task could have passed to another worker."""
    monkeypatch.setattr(store_engine, "SQLITE_BUSY_TIMEOUT_MS", 100)
    monkeypatch.setenv("MOBILE_AGENT_STORE_OUTAGE_S", "60")
    path = tmp_path / "mobile_agent.db"
    with TrajectoryStore.open(f"sqlite:///{path}") as store:
        release = _lock_for(path, 2.0)
        lease_until = time.monotonic() + 0.5
        with wait_bound(lambda: lease_until), pytest.raises(LeaseLapsing):
            store.start_episode("t", device="d", family="ui-venus-2", model="m")
        release.join()
        store.start_episode("t", device="d", family="ui-venus-2", model="m")  # and the store is fine after
