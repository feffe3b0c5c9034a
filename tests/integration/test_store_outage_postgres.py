"""The store on PostgreSQL when the server cuts a connection in the middle of a transaction (as `pg_ctl restart -m
fast` does to every one): the transaction is rolled back by the server and the store function runs again, with one
log line each way; and a schema-2 database gains the lease epochs in place.

Server and private schema: the ``pg_url`` fixture of tests/conftest.py (skips, saying why, without a server)."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy import text, update

from mobile_agent.actions import Action
from mobile_agent.store.outages import retried
from mobile_agent.store.records import StepRecord
from mobile_agent.store.schema import SCHEMA_VERSION, RunRow
from mobile_agent.store.store import TrajectoryStore

pytestmark = pytest.mark.postgres


def test_a_transaction_cut_part_way_runs_again(pg_url: str, tmp_path, caplog) -> None:
    with TrajectoryStore.open(pg_url, root=tmp_path) as store:
        run = store.create_run("before")
        tries: list[int] = []

        @retried
        def rename(store: TrajectoryStore) -> None:
            with store.write_session() as session:
                tries.append(len(tries))
                session.execute(update(RunRow).where(RunRow.id == run.id).values(name=f"try {len(tries)}"))
                if len(tries) == 1:  # the server ends this connection, as a fast shutdown does
                    session.execute(text("SELECT pg_terminate_backend(pg_backend_pid())"))

        caplog.set_level(logging.WARNING, logger="mobile_agent.store.outages")
        rename(store)
        assert tries == [0, 1] and store.run(run.id).name == "try 2"  # the first try left nothing behind
        lines = [r.getMessage() for r in caplog.records]
        assert sum(m.startswith("store unreachable") for m in lines) == 1, lines
        assert sum(m.startswith("store back after") for m in lines) == 1, lines


def test_a_schema_2_database_gains_lease_epochs(pg_url: str, tmp_path) -> None:
    with TrajectoryStore.open(pg_url, root=tmp_path) as store:
        old = store.start_episode("t", device="d", family="ui-venus-2", model="m")
        with store.write_session() as session:  # as version 2 left it
            session.execute(text("ALTER TABLE steps DROP COLUMN lease_epoch"))
            session.execute(text("ALTER TABLE episodes DROP COLUMN lease_epoch"))
            session.execute(text("UPDATE schema_info SET value = '2' WHERE key = 'schema_version'"))
    with TrajectoryStore.open(pg_url, root=tmp_path) as store:
        with store.read_session() as session:
            version = session.execute(text("SELECT value FROM schema_info WHERE key = 'schema_version'"))
            assert version.scalar() == str(SCHEMA_VERSION)
        assert store.episode(old.id).lease_epoch == 1
        store.hold_epoch(old.id, 1)
        store.record_step(old.id, StepRecord(index=0, action=Action.press("back")))
        assert store.steps(old.id)[0].lease_epoch == 1
