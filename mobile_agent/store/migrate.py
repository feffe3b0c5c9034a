"""Bring a database written by an older mobile-agent up to this schema, in place, on open.

New tables are created by ``create_all``; a column added to an existing table is listed here with the schema
version that brought it, and added with ``ALTER TABLE ... ADD COLUMN`` (nullable, no default: old rows read as
"unknown", which each reader documents). Safe to run from several processes at once.
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
    return added


def _tables() -> set[str]:
    return {table for table, _column, _version in ADDED_COLUMNS}


__all__ = ["ADDED_COLUMNS", "migrate"]
