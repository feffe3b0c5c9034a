"""Where a store lives, and the one-line errors a user sees when the database URL is wrong."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from sqlalchemy import text

from mobile_agent.errors import UserError
from mobile_agent.store.engine import parse_url, resolve_location
from mobile_agent.store.schema import SCHEMA_VERSION
from mobile_agent.store.store import TrajectoryStore


def test_default_is_sqlite_under_replays_in_the_current_directory(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with TrajectoryStore.open() as store:
        assert store.root == tmp_path / "replays"
        assert store.is_sqlite and store.url == f"sqlite:///{tmp_path / 'replays' / 'mobile_agent.db'}"
        with store.read_session() as session:
            assert session.execute(text("PRAGMA journal_mode")).scalar() == "wal"
            assert session.execute(text("PRAGMA foreign_keys")).scalar() == 1
            assert session.execute(text("PRAGMA busy_timeout")).scalar() >= 5000
    assert (tmp_path / "replays" / "mobile_agent.db").is_file()


def test_env_url_and_data_dir(tmp_path, monkeypatch) -> None:
    db = tmp_path / "elsewhere" / "farm.db"
    monkeypatch.setenv("MOBILE_AGENT_DB", f"sqlite:///{db}")
    with TrajectoryStore.open() as store:
        assert store.root == db.parent  # screenshots go next to the SQLite file
        episode = store.start_episode("t", device="d", family="f", model="m")
    assert db.is_file()
    with TrajectoryStore.open(f"sqlite:///{db}", root=tmp_path / "shots") as store:
        assert store.root == tmp_path / "shots"  # an explicit root wins
        assert store.episode(episode.id).task == "t"


def test_server_url_takes_its_root_from_the_environment(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MOBILE_AGENT_DATA", str(tmp_path / "data"))
    location = resolve_location("postgresql://u:pw@db.example:5432/farm")
    assert location.root == tmp_path / "data" and location.sqlite_path is None
    assert location.url.drivername == "postgresql+psycopg"
    assert location.display_url == "postgresql+psycopg://u:***@db.example:5432/farm"
    monkeypatch.delenv("MOBILE_AGENT_DATA")
    monkeypatch.chdir(tmp_path)
    assert resolve_location("postgresql://db/farm").root == tmp_path / "replays"


def test_postgres_urls_use_psycopg3_unless_told_otherwise() -> None:
    assert parse_url("postgresql://h/db").drivername == "postgresql+psycopg"
    assert parse_url("postgres://h/db").drivername == "postgresql+psycopg"
    assert parse_url("postgresql+psycopg://h/db").drivername == "postgresql+psycopg"
    assert parse_url("postgresql+psycopg2://h/db").drivername == "postgresql+psycopg2"


@pytest.mark.parametrize("url", ["not a url", "nosuchdb://x/y", "://"])
def test_bad_urls_are_user_errors_with_a_hint(url: str, tmp_path) -> None:
    with pytest.raises(UserError) as caught:
        TrajectoryStore.open(url, root=tmp_path)
    assert caught.value.exit_code == 2 and "sqlite:///" in (caught.value.hint or "")


def test_unreachable_server_is_a_user_error_without_the_password(tmp_path) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(UserError) as caught:
        TrajectoryStore.open(
            f"postgresql://me:topsecret@127.0.0.1:{port}/farm?connect_timeout=3", root=tmp_path
        )
    assert "cannot open the database" in caught.value.message
    assert "topsecret" not in caught.value.one_line() and caught.value.hint


def test_a_file_that_is_not_a_database_is_a_user_error(tmp_path) -> None:
    bogus = tmp_path / "mobile_agent.db"
    bogus.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(UserError, match="cannot open the database"):
        TrajectoryStore.open(root=tmp_path)


def test_schema_version_is_recorded_and_a_newer_one_is_refused(tmp_path: Path) -> None:
    with TrajectoryStore.open(root=tmp_path) as store:
        with store.read_session() as session:
            stored = session.execute(
                text("SELECT value FROM schema_info WHERE key = 'schema_version'")
            ).scalar()
        assert stored == str(SCHEMA_VERSION)
        with store.write_session() as session:
            session.execute(text("UPDATE schema_info SET value = :v"), {"v": str(SCHEMA_VERSION + 1)})
    with pytest.raises(UserError, match="schema version"):
        TrajectoryStore.open(root=tmp_path)


def test_reopening_keeps_data_and_tables(tmp_path: Path) -> None:
    with TrajectoryStore.open(root=tmp_path) as store:
        run = store.create_run("r", {"a": 1})
    with TrajectoryStore.open(root=tmp_path) as store:
        assert store.run(run.id).config == {"a": 1}


def test_unwritable_place_is_a_user_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(UserError, match="cannot create the store directory"):
        TrajectoryStore.open(root=blocker / "replays")
    with pytest.raises(UserError, match="cannot create the store directory"):
        TrajectoryStore.open("sqlite://", root=blocker / "replays")
