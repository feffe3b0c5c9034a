"""What goes wrong under a store, said in one line with what to do: a full disk, a read-only file or folder, a
database locked by another process, a file that is not (or not our) database.

``store_fault`` turns a driver error or an OSError into a ``StoreError`` with a hint; the store raises those from
every session and file write, so no caller sees a SQLAlchemy traceback. ``refuse_foreign_database`` stops a store
from adopting a database some other program wrote, even when it happens to have tables named like ours.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, inspect
from sqlalchemy.exc import DBAPIError, IntegrityError, SQLAlchemyError

from mobile_agent.errors import StoreError, UserError
from mobile_agent.store.schema import Base, SchemaInfoRow

OTHER_DB_HINT = "point --db (or MOBILE_AGENT_DB) at another file, or move the data away"

# Tables a foreign database may share names with; any one of them without our schema_info table is foreign.
_DATA_TABLES = ("runs", "episodes", "steps", "devices")

# (words in the driver's message, what happened, hint); {where} is the store's location. First match wins.
_DB_MESSAGES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (
        ("disk is full", "database or disk is full", "no space left"),
        "the disk holding the store is full",
        "free space on the disk holding {where}, or point --db / MOBILE_AGENT_DB at another disk",
    ),
    (
        ("readonly", "read-only", "read only"),
        "the store is read-only",
        "make {where} and its folder writable for this user, or point --db at a writable place",
    ),
    (
        ("database is locked", "database table is locked", "lock timeout", "could not obtain lock"),
        "the store is locked by another process for too long",
        "another mobile-agent (or a database browser) holds the write lock on {where}; stop it or retry later",
    ),
    (
        ("unable to open database", "cannot open", "permission denied"),
        "the store cannot be opened",
        "check that {where} and its folder exist and are readable and writable for this user",
    ),
    (
        ("file is not a database", "file is encrypted", "malformed", "not a database"),
        "the store's file is not a SQLite database, or it is damaged",
        OTHER_DB_HINT,
    ),
    (
        ("disk i/o error", "i/o error"),
        "the disk holding the store failed to read or write",
        "check the disk holding {where} (dmesg) and that it is still mounted",
    ),
)

_OS_ERRORS: dict[int, tuple[str, str]] = {
    errno.ENOSPC: _DB_MESSAGES[0][1:],  # type: ignore[dict-item]
    errno.EDQUOT: ("the disk quota of this user is used up", "free space under {where} or raise the quota"),
    errno.EROFS: _DB_MESSAGES[1][1:],  # type: ignore[dict-item]
    errno.EACCES: _DB_MESSAGES[1][1:],  # type: ignore[dict-item]
    errno.EPERM: _DB_MESSAGES[1][1:],  # type: ignore[dict-item]
    errno.EIO: _DB_MESSAGES[5][1:],  # type: ignore[dict-item]
}


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0][:300] if lines else ""


def store_fault(exc: BaseException, where: str) -> StoreError:
    """``exc`` (a driver error or an OSError) as one line with a hint; ``where`` names the store for people."""
    if isinstance(exc, OSError):
        what, hint = _OS_ERRORS.get(exc.errno or 0, ("a store file could not be written", "check {where}"))
        detail = exc.strerror or str(exc)
        return StoreError(f"{what} ({detail})", hint=hint.format(where=where))
    original = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    message = _first_line(str(original)) or type(original).__name__
    lowered = message.lower()
    for words, what, hint in _DB_MESSAGES:
        if any(word in lowered for word in words):
            return StoreError(f"{what} ({message})", hint=hint.format(where=where))
    return StoreError(
        f"the store failed: {message}",
        hint=f"check the database at {where} (is the server up, the disk fine?); `mobile-agent doctor` helps",
    )


def open_hint(exc: DBAPIError, where: str) -> str:
    """The hint for a database that would not open: the cause's own when the driver named one."""
    lowered = _first_line(str(exc.orig if exc.orig is not None else exc)).lower()
    for words, _what, hint in _DB_MESSAGES:
        if any(word in lowered for word in words):
            return hint.format(where=where)
    return "check the URL (--db / MOBILE_AGENT_DB), that the server is up and the credentials are right"


@contextmanager
def store_faults(where: str) -> Iterator[None]:
    """Driver errors inside become ``store_fault``s; an IntegrityError (a race callers handle) passes as is."""
    try:
        yield
    except IntegrityError:
        raise
    except DBAPIError as exc:
        raise store_fault(exc, where) from exc


def refuse_foreign_database(engine: Engine, where: str) -> None:
    """UserError when the database has tables named like ours but is not a mobile-agent store.

    Ours always has ``schema_info`` (written with the first tables); a file with ``episodes`` or ``steps`` but no
    ``schema_info``, or whose ``episodes``/``steps`` lack the columns every version had, came from elsewhere.
    """
    try:
        inspector = inspect(engine)
        tables = set(inspector.get_table_names())
        ours = [t for t in _DATA_TABLES if t in tables]
        if not ours:
            return
        foreign = SchemaInfoRow.__tablename__ not in tables
        missing: list[str] = []
        for table in ours:
            present = {c["name"] for c in inspector.get_columns(table)}
            declared = Base.metadata.tables[table]
            required = {c.name for c in declared.columns if not c.nullable and c.server_default is None}
            missing += [f"{table}.{name}" for name in sorted(required - present)]
    except SQLAlchemyError:  # unreachable or not a database at all: opening it says so, in its own words
        return
    if foreign or missing:
        why = f"lacks {', '.join(missing[:4])}" if missing else "has no schema_info table"
        raise UserError(
            f"{where} is not a mobile-agent store: it has tables named {', '.join(ours)} but {why}",
            hint=OTHER_DB_HINT,
        )


__all__ = ["OTHER_DB_HINT", "open_hint", "refuse_foreign_database", "store_fault", "store_faults"]
