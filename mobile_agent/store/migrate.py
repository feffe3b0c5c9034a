"""Bring a database written by an older mobile-agent up to this schema, in place, on open.

New tables are created by ``create_all``; a column added to an existing table is listed here with the schema
version that brought it, and added with ``ALTER TABLE ... ADD COLUMN`` (nullable, no default: old rows read as
"unknown", which each reader documents). An index added to an existing table is listed in ``ADDED_INDEXES`` and
created from its declaration; it changes no table's shape, so it does not move the schema version (an older
mobile-agent reads and writes the table as before). Safe to run from several processes at once.
"""

from __future__ import annotations

import logging

from sqlalchemy import Engine, inspect, text
from sqlalchemy.exc import DBAPIError

from mobile_agent.store.schema import SCHEMA_VERSION, Base

log = logging.getLogger(__name__)

# (table, column, schema version that added it); the type comes from the table's declaration in schema.py.
ADDED_COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("episodes", "owner", 2),
    ("episodes", "heartbeat_at", 2),
    ("steps", "status", 2),
    ("episodes", "lease_epoch", 3),
    ("steps", "lease_epoch", 3),
)

# (table, index): indexes declared in schema.py or a table module that a database made before them lacks.
ADDED_INDEXES: tuple[tuple[str, str], ...] = (
    ("queue_tasks", "ix_queue_tasks_pending"),
    ("queue_tasks", "ix_queue_tasks_pending_run"),
)


def migrate(engine: Engine) -> list[str]:
    """Add the columns an older database lacks and record the schema version; returns "table.column" added."""
    added: list[str] = []
    existing = {table: {c["name"] for c in inspect(engine).get_columns(table)} for table in _tables()}
    preparer = engine.dialect.identifier_preparer
    for table, column, _version in ADDED_COLUMNS:
        if column in existing[table]:
            continue
        declared = Base.metadata.tables[table].columns[column]
        kind = declared.type.compile(dialect=engine.dialect)
        guard = " IF NOT EXISTS" if engine.dialect.name == "postgresql" else ""
        statement = f"ALTER TABLE {preparer.quote(table)} ADD COLUMN{guard} {preparer.quote(column)} {kind}"
        try:
            with engine.begin() as connection:
                connection.execute(text(statement))
        except DBAPIError as exc:
            if "duplicate column" not in str(exc.orig).lower():  # SQLite: another process added it first
                raise
        added.append(f"{table}.{column}")
    if added:
        with engine.begin() as connection:
            stored = connection.execute(
                text("SELECT value FROM schema_info WHERE key = 'schema_version'")
            ).scalar()
            if stored is not None and str(stored).isdigit() and int(stored) < SCHEMA_VERSION:
                connection.execute(
                    text("UPDATE schema_info SET value = :new WHERE key = 'schema_version'"),
                    {"new": str(SCHEMA_VERSION)},
                )
        log.info("store migrated to schema version %d: added %s", SCHEMA_VERSION, ", ".join(added))
    return added + _add_indexes(engine)


def _add_indexes(engine: Engine) -> list[str]:
    """Create the listed indexes an older database lacks; returns "table.index" created."""
    added: list[str] = []
    inspector = inspect(engine)
    for table, name in ADDED_INDEXES:
        if table not in Base.metadata.tables or not inspector.has_table(table):
            continue
        if name in {index["name"] for index in inspector.get_indexes(table)}:
            continue
        [declared] = [index for index in Base.metadata.tables[table].indexes if index.name == name]
        try:
            with engine.begin() as connection:
                declared.create(connection, checkfirst=True)
        except DBAPIError as exc:
            reason = str(exc.orig).strip().lower()
            if "locked" in reason:  # TrajectoryStore._prepare waits and tries again
                raise
            if "already exists" not in reason:  # not another process creating it first: read-only, no rights
                log.warning(
                    "could not add the index %s to %s (it only speeds claims up): %s", name, table, exc.orig
                )
                continue
        added.append(f"{table}.{name}")
    if added:
        log.info("store migrated: added the indexes %s", ", ".join(added))
    return added


def _tables() -> set[str]:
    return {table for table, _column, _version in ADDED_COLUMNS}


__all__ = ["ADDED_COLUMNS", "migrate"]
