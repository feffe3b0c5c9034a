"""Where a store lives (database URL + file root) and the SQLAlchemy engine that reaches it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError
from sqlalchemy.pool import StaticPool

from mobile_agent.errors import UserError
from mobile_agent.privacy.redact import redact_text, redact_url

DB_ENV = "MOBILE_AGENT_DB"
DATA_ENV = "MOBILE_AGENT_DATA"
DEFAULT_ROOT = Path("replays")
SQLITE_FILENAME = "mobile_agent.db"
SQLITE_BUSY_TIMEOUT_MS = 30_000

# Execution option that marks a connection as a writer; on SQLite it then starts with BEGIN IMMEDIATE so the write
# lock is taken up front (a deferred transaction that upgrades later can fail with "database is locked" at once,
# without waiting for the busy timeout).
WRITE_OPTION = "mobile_agent_write"

URL_HINT = (
    "use a SQLAlchemy URL such as sqlite:///replays/mobile_agent.db or postgresql://user@host:5432/dbname "
    f"(flag --db or env {DB_ENV})"
)


@dataclass(frozen=True)
class StoreLocation:
    url: URL
    root: Path  # screenshots and hierarchy files live under here
    sqlite_path: Path | None  # None for a server database or an in-memory SQLite

    @property
    def is_sqlite(self) -> bool:
        return self.url.get_backend_name() == "sqlite"

    @property
    def display_url(self) -> str:
        return self.url.render_as_string(hide_password=True)


def resolve_location(url: str | None = None, root: Path | str | None = None) -> StoreLocation:
    """url: argument, else env MOBILE_AGENT_DB (or the config file's ``db``), else SQLite at <root>/mobile_agent.db.

    root: argument, else the SQLite file's directory, else env MOBILE_AGENT_DATA, else ./replays.
    """
    explicit_root = Path(root).expanduser() if root is not None else None
    from mobile_agent.settings.values import load_settings

    text = url if url is not None else load_settings().db  # MOBILE_AGENT_DB, then the config file
    if text is None:
        base = (explicit_root or Path(os.environ.get(DATA_ENV) or DEFAULT_ROOT)).resolve()
        path = base / SQLITE_FILENAME
        return StoreLocation(URL.create("sqlite", database=str(path)), base, path)

    parsed = parse_url(text)
    sqlite_path = _sqlite_file(parsed)
    if explicit_root is not None:
        base = explicit_root.resolve()
    elif sqlite_path is not None:
        base = sqlite_path.parent
    else:
        base = Path(os.environ.get(DATA_ENV) or DEFAULT_ROOT).expanduser().resolve()
    return StoreLocation(parsed, base, sqlite_path)


def parse_url(text: str) -> URL:
    try:
        parsed = make_url(text.strip())
    except (ArgumentError, ValueError) as exc:
        raise UserError(f"not a database URL: {redact_url(text)!r}", hint=URL_HINT) from exc
    driver = parsed.drivername
    # Plain postgresql:// would pick psycopg2; this project ships psycopg 3.
    if driver in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def _sqlite_file(url: URL) -> Path | None:
    if url.get_backend_name() != "sqlite":
        return None
    database = url.database or ""
    if database in ("", ":memory:") or database.startswith("file:"):
        return None
    return Path(database).expanduser().resolve()


def make_directory(path: Path) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(
            f"cannot create the store directory {path}: {exc.strerror or exc}",
            hint="pick a writable place with --db / MOBILE_AGENT_DB or MOBILE_AGENT_DATA",
        ) from exc


def create_store_engine(location: StoreLocation) -> Engine:
    url = location.url
    if location.sqlite_path is not None:
        make_directory(location.sqlite_path.parent)
        url = url.set(database=str(location.sqlite_path))
    options: dict[str, Any] = {}
    if location.is_sqlite and location.sqlite_path is None:
        # One shared connection, or every thread would get its own empty in-memory database.
        options.update(poolclass=StaticPool, connect_args={"check_same_thread": False})
    elif not location.is_sqlite:
        options.update(pool_pre_ping=True, pool_size=10, max_overflow=30)
    try:
        engine = create_engine(url, **options)
    except NoSuchModuleError as exc:
        raise UserError(f"unknown database kind {url.drivername!r}", hint=URL_HINT) from exc
    except ModuleNotFoundError as exc:
        raise UserError(
            f"the database driver for {url.drivername!r} is not installed ({exc.name})",
            hint="for PostgreSQL: pip install 'mobile-agent[postgres]'",
        ) from exc
    except (ArgumentError, TypeError) as exc:
        raise UserError(f"bad database URL {location.display_url!r}: {exc}", hint=URL_HINT) from exc
    if location.is_sqlite:
        _configure_sqlite(engine)
    _redact_parameters(engine)
    return engine


def _redact_parameters(engine: Engine) -> None:
    """Every text value sent to the database passes ``redact_text`` first: whatever a caller forgot (an endpoint
    echoing the API key in an error body, a key in a URL), no secret reaches a row. JSON is text by then too."""

    def clean(value: Any) -> Any:
        return redact_text(value) if isinstance(value, str) else value

    def clean_set(params: Any) -> Any:
        if isinstance(params, dict):
            return {key: clean(value) for key, value in params.items()}
        if isinstance(params, (list, tuple)):
            return type(params)(clean(value) for value in params)
        return params

    @event.listens_for(engine, "before_cursor_execute", retval=True)
    def _before(
        conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
    ) -> Any:
        if executemany and isinstance(parameters, (list, tuple)):
            return statement, type(parameters)(clean_set(p) for p in parameters)
        return statement, clean_set(parameters)


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event below issue BEGIN instead of the sqlite3 module's own guesswork.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.execute("PRAGMA foreign_keys = ON")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        writer = connection.get_execution_options().get(WRITE_OPTION, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if writer else "BEGIN")


__all__ = [
    "DATA_ENV",
    "DB_ENV",
    "StoreLocation",
    "WRITE_OPTION",
    "create_store_engine",
    "make_directory",
    "parse_url",
    "resolve_location",
]
