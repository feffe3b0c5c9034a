"""Completion of option and argument values (``--family <TAB>``, ``show <TAB>``, ``--device <TAB>``).

Each function is a typer ``autocompletion`` callback. Completion runs while a person types, so every one of them is
bounded (it answers within ``BOUND_S`` or offers nothing) and silent (an absent store, an adb server nobody started,
a bad ``--db``: no completion, never a traceback or a log line on the terminal). Nothing is created: an SQLite store
that does not exist yet is not made by pressing TAB, and no adb server is started.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import typer

BOUND_S = 2.0  # the longest a TAB waits for the store or the adb server
SHOWN = 50  # at most this many episode or run ids
T = TypeVar("T")


def bounded(work: Callable[[], list[T]], timeout: float = BOUND_S) -> list[T]:
    """``work()``'s result within ``timeout`` seconds, else []; any failure is [] as well, and logs nothing."""
    found: list[list[T]] = []

    def attempt() -> None:
        try:
            found.append(work())
        except BaseException:  # noqa: BLE001 - completion offers nothing rather than fail in the shell
            pass

    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        worker = threading.Thread(
            target=attempt, name="completion", daemon=True
        )  # a hung call is left behind
        worker.start()
        worker.join(timeout)
    finally:
        logging.disable(previous)
    return found[0] if found else []


def _param(ctx: typer.Context | None, name: str) -> Any:
    """A value typed earlier on the line (``--db``, ``--adb``), from this command or a parent group."""
    while ctx is not None:
        value = ctx.params.get(name)
        if value:
            return value
        ctx = ctx.parent
    return None


def complete_family(incomplete: str) -> list[tuple[str, str]]:
    """Every model family name (``--family``)."""
    from mobile_agent.model.families import FAMILIES

    return [(name, "model family") for name in FAMILIES if name.startswith(incomplete.lower())]


def _existing_store(db: str | None) -> Any:
    """The store at ``db`` (or the configured one); None when it is an SQLite file that does not exist."""
    from mobile_agent.store.engine import resolve_location
    from mobile_agent.store.store import TrajectoryStore

    location = resolve_location(db)
    if location.is_sqlite and (location.sqlite_path is None or not Path(location.sqlite_path).is_file()):
        return None
    return TrajectoryStore.open(db)


def _one_line(text: str | None, width: int = 60) -> str:
    line = " ".join((text or "").split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _ids(
    ctx: typer.Context, incomplete: str, listing: Callable[[Any, int | None], list[tuple[str, str]]]
) -> list:
    """(id, description) pairs ``listing(store, limit)`` gives, newest first, that start with ``incomplete``."""

    def read() -> list[tuple[str, str]]:
        store = _existing_store(_param(ctx, "db"))
        if store is None:
            return []
        with store:
            rows = listing(store, None if incomplete else SHOWN)  # a typed prefix may name an older one
        return [(id_, about) for id_, about in rows if id_.startswith(incomplete)][:SHOWN]

    return bounded(read)


def complete_episode(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """Episode ids, newest first, each with its task (``show``, ``replay``, ``report``, ``verify``, ``resume``)."""
    return _ids(
        ctx, incomplete, lambda store, n: [(e.id, _one_line(e.task)) for e in store.list_episodes(limit=n)]
    )


def complete_run(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """Run ids, newest first, each with its name (``--run``, ``runs show``)."""
    return _ids(
        ctx, incomplete, lambda store, n: [(r.id, _one_line(r.name)) for r in store.list_runs(limit=n)]
    )


def complete_serial(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """Serials of the phones the adb server (``--adb``, else the configured one) knows, with their state."""

    def read() -> list[tuple[str, str]]:
        from mobile_agent.device.adb_server import list_devices

        return [
            (serial, state)
            for serial, state in list_devices(_param(ctx, "adb"))
            if serial.startswith(incomplete)
        ]

    return bounded(read)


__all__ = ["bounded", "complete_episode", "complete_family", "complete_run", "complete_serial"]
