"""Owners, heartbeats, intents and the migration that brings a schema-1 store up to date.

Attacks: a database file written by the previous version (no owner, heartbeat or step status columns); an owner
on another host that stopped beating; a pid on this host that now belongs to another process; an episode with no
owner at all (written by an older version: never judged); completing a step that is no intent."""

from __future__ import annotations

import os
import socket
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import update

from mobile_agent.actions import Action, Outcome
from mobile_agent.errors import StoreError
from mobile_agent.store.convert import now_utc
from mobile_agent.store.intents import complete_step
from mobile_agent.store.owners import DONE, INTENT, beat, end_gone_episodes, gone_owner_reason
from mobile_agent.store.process import Owner, owner_gone, this_process
from mobile_agent.store.records import EpisodeStatus, StepRecord
from mobile_agent.store.schema import SCHEMA_VERSION, EpisodeRow, SchemaInfoRow
from mobile_agent.store.store import TrajectoryStore


def _set(store: TrajectoryStore, episode_id: str, **values) -> None:
    with store.write_session() as session:
        session.execute(update(EpisodeRow).where(EpisodeRow.id == episode_id).values(**values))


def test_a_schema_1_file_opens_and_is_migrated(tmp_path: Path) -> None:
    if sqlite3.sqlite_version_info < (3, 35):
        pytest.skip("this SQLite cannot drop columns to build a schema-1 file")
    db = tmp_path / "old.db"
    with TrajectoryStore.open(f"sqlite:///{db}") as store:
        episode = store.start_episode("old", device="d", family="f", model="m")
        store.record_step(episode.id, StepRecord(index=0, action=Action.wait(100)))
    with sqlite3.connect(db) as raw:  # what the previous version wrote
        raw.execute("ALTER TABLE episodes DROP COLUMN owner")
        raw.execute("ALTER TABLE episodes DROP COLUMN heartbeat_at")
        raw.execute("ALTER TABLE steps DROP COLUMN status")
        raw.execute("UPDATE schema_info SET value = '1' WHERE key = 'schema_version'")
    with TrajectoryStore.open(f"sqlite:///{db}") as store:
        old = store.episode(episode.id)
        assert old.status is EpisodeStatus.RUNNING  # no owner recorded: left for `batch --resume` as before
        assert store.steps(episode.id)[0].status is None  # "done", written before steps had a status
        with store.read_session() as session:
            assert session.get(SchemaInfoRow, "schema_version").value == str(SCHEMA_VERSION)
        fresh = store.start_episode("new", device="d", family="f", model="m")
        with store.read_session() as session:
            assert session.get(EpisodeRow, fresh.id).owner == this_process()
        assert store.check_integrity() == []


def test_an_owner_on_another_host_is_gone_once_its_heartbeat_is_older_than_the_lease(store) -> None:
    quiet = store.start_episode("a", device="d1", family="f", model="m")
    beating = store.start_episode("b", device="d2", family="f", model="m")
    _set(store, quiet.id, owner="elsewhere:42:x-1", heartbeat_at=now_utc() - timedelta(seconds=120))
    _set(store, beating.id, owner="elsewhere:43:x-1", heartbeat_at=now_utc() - timedelta(seconds=5))
    gone = end_gone_episodes(store, lease=60)
    assert [g.episode_id for g in gone] == [quiet.id]
    ended = store.episode(quiet.id)
    assert ended.outcome == Outcome.INTERRUPTED and "no heartbeat from elsewhere:42" in ended.outcome_detail
    assert store.episode(beating.id).is_running


def test_a_dead_or_reused_pid_on_this_host_is_gone_and_a_live_one_is_not(store) -> None:
    host = socket.gethostname()
    parent = os.getppid()
    reused = store.start_episode("reused", device="d1", family="f", model="m")
    _set(store, reused.id, owner=f"{host}:{parent}:00000000-1")  # the pid lives, but started at another time
    mine = store.start_episode("mine", device="d2", family="f", model="m")
    unowned = store.start_episode("legacy", device="d3", family="f", model="m")
    _set(store, unowned.id, owner=None, heartbeat_at=None)
    gone = {g.episode_id: g.reason for g in end_gone_episodes(store)}
    assert set(gone) == {reused.id} and "another process" in gone[reused.id]
    assert store.episode(mine.id).is_running and store.episode(unowned.id).is_running
    assert owner_gone(this_process()) is None
    assert owner_gone(f"{host}:999999999:") is not None  # no such pid
    assert gone_owner_reason(None, 10_000, 60) is None
    assert Owner.parse("not an owner") is None


def test_a_step_is_written_as_intent_then_completed_once(store) -> None:
    episode = store.start_episode("t", device="d", family="f", model="m")
    store.record_step(episode.id, StepRecord(index=0, action=Action.wait(100), status=INTENT))
    assert store.steps(episode.id)[0].status == INTENT
    complete_step(store, episode.id, 0, DONE, act_ms=12.0, settle_ms=30.0)
    step = store.steps(episode.id)[0]
    assert step.status == DONE and step.timings.act_ms == 12.0
    with pytest.raises(StoreError):
        complete_step(store, episode.id, 0, DONE)  # no longer an intent
    with pytest.raises(StoreError):
        complete_step(store, episode.id, 0, "maybe")
    assert beat(store, episode.id)
    store.finish_episode(episode.id, Outcome.FINISHED)
    assert not beat(store, episode.id)  # an ended episode has no heartbeat to renew
