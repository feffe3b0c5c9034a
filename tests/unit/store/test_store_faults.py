"""Faults under the store as one line with a hint: a database locked by another process, a foreign SQLite file
with tables named like ours, a full disk or read-only folder (as the OSError the file writes get). And the store's
last line of defence for secrets: every text value sent to the database is redacted."""

from __future__ import annotations

import errno
import sqlite3

import pytest

from mobile_agent.errors import StoreError, UserError
from mobile_agent.privacy.redact import register_secret
from mobile_agent.store import engine as store_engine
from mobile_agent.store.faults import store_fault
from mobile_agent.store.records import StepRecord
from mobile_agent.store.store import TrajectoryStore


def test_a_locked_database_is_a_store_error_with_a_hint(tmp_path, monkeypatch):
    """Locked past the outage bound (here 1 s): one line with a hint (a brief lock is waited out: test_outages)."""
    monkeypatch.setattr(store_engine, "SQLITE_BUSY_TIMEOUT_MS", 200)
    monkeypatch.setenv("MOBILE_AGENT_STORE_OUTAGE_S", "1")
    path = tmp_path / "mobile_agent.db"
    with TrajectoryStore.open(f"sqlite:///{path}") as store:
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            with pytest.raises(StoreError) as caught:
                store.start_episode("t", device="d", family="ui-venus-2", model="m")
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert "locked" in caught.value.message and caught.value.hint
        assert "\n" not in caught.value.one_line()
        store.start_episode("t", device="d", family="ui-venus-2", model="m")  # free again: works


@pytest.mark.parametrize(
    "tables",
    [
        "CREATE TABLE episodes (id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE steps (id INTEGER, x TEXT)",
        "CREATE TABLE steps (episode_id TEXT, idx INTEGER)",
        "CREATE TABLE runs (id TEXT PRIMARY KEY)",
    ],
)
def test_a_foreign_sqlite_file_with_our_table_names_is_refused(tmp_path, tables):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as connection:
        connection.executescript(tables)
    before = path.read_bytes()
    with pytest.raises(UserError, match="not a mobile-agent store") as caught:
        TrajectoryStore.open(f"sqlite:///{path}")
    assert caught.value.hint
    with sqlite3.connect(path) as connection:  # nothing was added to it
        names = {r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "schema_info" not in names and len(path.read_bytes()) == len(before)


def test_a_file_that_is_not_sqlite_is_one_line(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("just some text, not a database\n" * 100)
    with pytest.raises(UserError) as caught:
        TrajectoryStore.open(f"sqlite:///{path}")
    assert "\n" not in caught.value.one_line()


@pytest.mark.parametrize(
    ("code", "words"),
    [(errno.ENOSPC, "full"), (errno.EROFS, "read-only"), (errno.EACCES, "read-only"), (errno.EIO, "failed")],
)
def test_file_write_errors_become_store_errors(tmp_path, monkeypatch, code, words):
    import mobile_agent.store.store as store_module

    def fail(path, data):
        raise OSError(code, "simulated")

    with TrajectoryStore.open(root=tmp_path) as store:
        episode = store.start_episode("t", device="d", family="ui-venus-2", model="m")
        monkeypatch.setattr(store_module, "write_atomic", fail)
        with pytest.raises(StoreError) as caught:
            store.record_step(episode.id, StepRecord(index=0), screenshot=b"\xff\xd8\xff" + b"\0" * 10)
        assert words in caught.value.message and caught.value.hint
        assert store.steps(episode.id) == []  # nothing half-written


def test_driver_messages_map_to_a_cause():
    cases = {
        "database or disk is full": "full",
        "attempt to write a readonly database": "read-only",
        "database is locked": "locked",
        "file is not a database": "not a SQLite database",
        "something new": "the store failed",
    }
    for text, words in cases.items():
        fault = store_fault(sqlite3.OperationalError(text), "sqlite:///x.db")
        assert words in fault.message and fault.hint, (text, fault.one_line())


def test_no_secret_reaches_a_row_whatever_the_caller_forgot(tmp_path):
    register_secret("sk-store-boundary-1234567")
    path = tmp_path / "mobile_agent.db"
    with TrajectoryStore.open(f"sqlite:///{path}") as store:
        episode = store.start_episode(
            "task mentions sk-store-boundary-1234567",
            device="d",
            family="ui-venus-2",
            model="m",
            base_url="http://u:pw-in-url@h:1/v1?api_key=sk-q-999999&x=1",
            meta={"note": "Authorization: Bearer abcdefghijkl", "api_key": "dropped"},
        )
        store.record_step(
            episode.id,
            StepRecord(index=0, raw_reply="echo: sk-store-boundary-1234567", error_text="key=sk-q-999999"),
        )
        store.finish_episode(episode.id, "error:model", detail="HTTP 401: Bearer sk-store-boundary-1234567")
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("mobile_agent.db*"))
    for secret in (b"sk-store-boundary-1234567", b"pw-in-url", b"sk-q-999999", b"abcdefghijkl", b"dropped"):
        assert secret not in raw, secret
