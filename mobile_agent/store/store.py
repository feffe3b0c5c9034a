"""TrajectoryStore: every read and write of runs, episodes, steps, devices and their files.

One store is shared by many worker threads. Each call uses its own short session; writes on SQLite are serialised
by a lock per database file (and BEGIN IMMEDIATE + a busy timeout across processes). Every write commits before
the call returns, so a killed process loses at most the step in flight.

Example::

    store = TrajectoryStore.open()                       # ./replays/mobile_agent.db
    ep = store.start_episode("open settings", device="emulator-5554", family="venus", model="ui-venus-2")
    store.record_step(ep.id, StepRecord(index=0, action=Action.launch("settings")), screenshot=jpeg_bytes)
    store.finish_episode(ep.id, Outcome.FINISHED)
    print(store.episode(ep.id[:6]).step_count)           # 1
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from pathlib import Path
from typing import Any

from PIL import Image
from sqlalchemy import Connection, Engine, select, update
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Session

from mobile_agent.actions import Outcome
from mobile_agent.errors import StoreError, UserError
from mobile_agent.privacy.redact import redact_url
from mobile_agent.store.convert import (
    clip_text,
    device_info,
    episode_info,
    json_safe,
    now_utc,
    run_info,
    step_info,
    step_row,
)
from mobile_agent.store.engine import (
    WRITE_OPTION,
    StoreLocation,
    create_store_engine,
    make_directory,
    resolve_location,
)
from mobile_agent.store.faults import open_hint, refuse_foreign_database, store_fault
from mobile_agent.store.files import (
    as_jpeg,
    hierarchy_name,
    inside_root,
    screenshot_name,
    sha256_bytes,
    write_atomic,
)
from mobile_agent.store.integrity import IntegrityChecker
from mobile_agent.store.lookup import LIST_HINT, RowT, as_outcome, resolve_id, validate_step
from mobile_agent.store.migrate import migrate
from mobile_agent.store.outages import Outage, retried, until_done
from mobile_agent.store.owners import end_gone_episodes
from mobile_agent.store.records import (
    DeviceInfo,
    EpisodeInfo,
    EpisodeStatus,
    RunInfo,
    RunStatus,
    StepInfo,
    StepRecord,
)
from mobile_agent.store.schema import (
    ID_LENGTH,
    SCHEMA_VERSION,
    Base,
    DeviceRow,
    EpisodeRow,
    RunRow,
    SchemaInfoRow,
    StepRow,
)
from mobile_agent.store.sessions import Transactions
from mobile_agent.store.step_writes import FencedOut, add_step, require_new_step, step_landed

log = logging.getLogger(__name__)

DEFAULT_ADB_SERVER = "127.0.0.1:5037"

_file_locks: dict[Path, threading.Lock] = {}
_file_locks_guard = threading.Lock()


def _lock_for(location: StoreLocation) -> AbstractContextManager[Any]:
    if not location.is_sqlite:
        return nullcontext()
    if location.sqlite_path is None:
        return threading.Lock()
    # Two stores opened on the same file in one process must share the lock, or they would fight over SQLite's.
    with _file_locks_guard:
        return _file_locks.setdefault(location.sqlite_path, threading.Lock())


_PREPARE_TRIES = 5


class TrajectoryStore:
    """Runs, episodes and steps in a SQL database; screenshots and hierarchy XML as files under ``root``."""

    def __init__(self, engine: Engine, location: StoreLocation) -> None:
        self._engine = engine
        self._location = location
        self._write_engine = engine.execution_options(**{WRITE_OPTION: True})
        write_lock = _lock_for(location)
        # An in-memory SQLite has a single shared connection, so reads must not interleave with writes either.
        in_memory = location.is_sqlite and location.sqlite_path is None
        read_lock: AbstractContextManager[Any] = write_lock if in_memory else nullcontext()
        self.outage = Outage(location.display_url)  # one line when the database goes, one when it returns
        self._epochs: dict[str, int] = {}  # episode id -> the lease epoch this process runs it under
        self._tx = Transactions(
            engine, self._write_engine, self.describe_location, write_lock, read_lock, self.outage
        )

    # ----------------------------------------------------------------------------------------------- lifecycle
    @classmethod
    def open(cls, url: str | None = None, root: Path | str | None = None) -> TrajectoryStore:
        """Open (and create if needed) a store.

        url: a SQLAlchemy URL, else env MOBILE_AGENT_DB, else SQLite at ``<root>/mobile_agent.db``.
        root: where screenshot files go; defaults to the SQLite file's directory, else env MOBILE_AGENT_DATA, else
        ``./replays``. ``postgresql://`` URLs use psycopg 3.
        """
        location = resolve_location(url, root)
        engine = create_store_engine(location)
        store = cls(engine, location)
        try:
            refuse_foreign_database(engine, location.display_url)
            store._prepare()
            make_directory(location.root)
            store._end_gone_episodes()
        except DBAPIError as exc:
            engine.dispose()
            first_line = (
                str(exc.orig).strip().splitlines()[0] if str(exc.orig).strip() else type(exc.orig).__name__
            )
            raise UserError(
                f"cannot open the database {location.display_url}: {first_line}",
                hint=open_hint(exc, location.display_url),
            ) from exc
        except BaseException:
            engine.dispose()
            raise
        log.info("store open: %s (files under %s)", location.display_url, location.root)
        return store

    def _prepare(self) -> None:
        """Tables, migrations and the schema version. Two processes opening a new SQLite store at once take turns
        on its write lock: a lock held past the busy timeout is waited out a few more times (bounded)."""
        for attempt in range(_PREPARE_TRIES):
            try:
                self.create_tables()
                migrate(self._engine)
                self._check_schema_version()
                return
            except (DBAPIError, StoreError) as exc:
                if attempt == _PREPARE_TRIES - 1 or "locked" not in str(getattr(exc, "orig", exc)).lower():
                    raise
                time.sleep(0.2 * (attempt + 1))

    def create_tables(self) -> None:
        """Create every table registered on ``schema.Base`` that does not exist yet (safe to call again)."""
        try:
            Base.metadata.create_all(self._engine)
        except (IntegrityError, DBAPIError) as exc:
            # Another process created the same tables at the same moment (PostgreSQL); the second try sees them.
            log.debug("create_all raced with another process, retrying: %s", exc)
            Base.metadata.create_all(self._engine)

    def _check_schema_version(self) -> None:
        with self.read_session() as session:  # a read first, so a read-only store still opens for reading
            known = session.get(SchemaInfoRow, "schema_version")
            stored_text = known.value if known is not None else None
        if stored_text is not None:
            self._refuse_newer(int(stored_text) if stored_text.isdigit() else SCHEMA_VERSION + 1)
            return
        try:
            with self.write_session() as session:
                row = session.get(SchemaInfoRow, "schema_version")
                if row is None:
                    session.add(SchemaInfoRow(key="schema_version", value=str(SCHEMA_VERSION)))
                    return
                stored = int(row.value)
        except IntegrityError:
            return  # another process wrote the version row first
        self._refuse_newer(stored)

    def _refuse_newer(self, stored: int) -> None:
        if stored > SCHEMA_VERSION:
            raise UserError(
                f"the database {self.url} has schema version {stored}; this mobile-agent knows {SCHEMA_VERSION}",
                hint="upgrade mobile-agent, or point --db at another database",
            )

    def _end_gone_episodes(self) -> None:
        """Episodes left running by a process that is gone end as interrupted (mobile_agent.store.owners)."""
        try:
            end_gone_episodes(self)
        except (
            DBAPIError,
            StoreError,
        ) as exc:  # a read-only or busy store still opens; the next command tries
            log.warning("could not end the episodes of stopped processes: %s", getattr(exc, "orig", exc))

    def close(self) -> None:
        self._engine.dispose()

    def __enter__(self) -> TrajectoryStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def root(self) -> Path:
        return self._location.root

    @property
    def url(self) -> str:
        """The database URL with any password hidden."""
        return self._location.display_url

    def describe_location(self) -> str:
        """One line for people: where the rows and the screenshots are."""
        return f"{self.url} (screenshots under {self.root})"

    @property
    def is_sqlite(self) -> bool:
        return self._location.is_sqlite

    @property
    def engine(self) -> Engine:
        return self._engine

    # The store's transactions (mobile_agent.store.sessions): a session that commits on exit (for modules that add
    # tables) or a Core connection (the per-step writes, mobile_agent.store.step_writes). A full disk, a read-only
    # or locked database is a one-line StoreError with a hint; an outage is waited out (store/outages.py).
    def write_session(self) -> AbstractContextManager[Session]:
        return self._tx.write_session()

    def read_session(self) -> AbstractContextManager[Session]:
        return self._tx.read_session()

    def write_connection(self) -> AbstractContextManager[Connection]:
        return self._tx.write_connection()

    def read_connection(self) -> AbstractContextManager[Connection]:
        return self._tx.read_connection()

    # ----------------------------------------------------------------------------------------------------- runs
    @retried
    def create_run(self, name: str, config: Mapping[str, Any] | None = None) -> RunInfo:
        safe_config = json_safe(dict(config or {}))
        with self.write_session() as session:
            row = RunRow(
                id=self._fresh_id(session, RunRow),
                name=name,
                created_at=now_utc(),
                config=safe_config,
                status=RunStatus.RUNNING.value,
            )
            session.add(row)
        return run_info(row)

    @retried
    def finish_run(self, run_id: str, status: RunStatus | str = RunStatus.ENDED) -> RunInfo:
        status = RunStatus(status)
        with self.write_session() as session:
            row = session.get(RunRow, run_id)
            if row is None:
                raise StoreError(f"no run {run_id!r}")
            row.status = status.value
            row.ended_at = now_utc()
        return run_info(row)

    @retried
    def run(self, id_or_prefix: str) -> RunInfo:
        with self.read_session() as session:
            return run_info(resolve_id(session, RunRow, id_or_prefix, "run"))

    @retried
    def list_runs(self, *, limit: int | None = 20) -> list[RunInfo]:
        query = select(RunRow).order_by(RunRow.created_at.desc(), RunRow.id).limit(limit)
        with self.read_session() as session:
            return [run_info(row) for row in session.scalars(query)]

    # ------------------------------------------------------------------------------------------------- episodes
    def start_episode(
        self,
        task: str,
        *,
        device: str,
        family: str,
        model: str,
        base_url: str | None = None,
        run_id: str | None = None,
        app: str | None = None,
        source_episode_id: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> EpisodeInfo:
        safe_meta = json_safe(dict(meta or {}))
        fixed: list[str] = []  # the id, kept across a retry after an outage (its commit may have landed)

        def attempt(retry: bool) -> EpisodeRow:
            with self.write_session() as session:
                if retry and fixed and (found := session.get(EpisodeRow, fixed[0])) is not None:
                    return found
                if run_id is not None and session.get(RunRow, run_id) is None:
                    raise StoreError(f"cannot start an episode in run {run_id!r}: no such run")
                if source_episode_id is not None and session.get(EpisodeRow, source_episode_id) is None:
                    raise UserError(f"no episode {source_episode_id!r} to replay", hint=LIST_HINT)
                fixed[:] = fixed or [self._fresh_id(session, EpisodeRow)]
                row = EpisodeRow(
                    id=fixed[0],
                    run_id=run_id,
                    task=task,
                    app=app,
                    device=device,
                    family=family,
                    model=model,
                    base_url=redact_url(base_url) if base_url else None,
                    status=EpisodeStatus.RUNNING.value,
                    started_at=now_utc(),
                    step_count=0,
                    source_episode_id=source_episode_id,
                    meta=safe_meta,
                )
                session.add(row)
                return row

        row = until_done(self.outage, attempt)
        self._epochs[row.id] = row.lease_epoch or 1
        log.debug("episode %s started on %s: %s", row.id, device, task)
        return episode_info(row)

    def epoch_of(self, episode_id: str) -> int | None:
        """The lease epoch this process runs the episode under (None: not here); set by ``hold_epoch``."""
        return self._epochs.get(episode_id)

    def hold_epoch(self, episode_id: str, epoch: int) -> None:  # mobile_agent.store.owners.claim_episode
        self._epochs[episode_id] = epoch

    @retried
    def finish_episode(
        self,
        episode_id: str,
        outcome: Outcome | str,
        *,
        detail: str | None = None,
        answer: str | None = None,
    ) -> EpisodeInfo:
        value = as_outcome(outcome)
        epoch = self._epochs.get(episode_id)
        with self.write_session() as session:
            row = session.get(EpisodeRow, episode_id, with_for_update=True)
            if row is None:
                raise StoreError(f"no episode {episode_id!r} to finish")
            if row.status != EpisodeStatus.RUNNING.value:
                raise StoreError(f"episode {episode_id} already ended ({row.outcome})")
            if epoch is not None and (row.lease_epoch or 1) != epoch:
                raise FencedOut(
                    f"episode {episode_id} was taken over (lease epoch {row.lease_epoch}, ours {epoch})"
                )
            row.status = EpisodeStatus.ENDED.value
            row.outcome = value
            row.outcome_detail = clip_text(detail)
            row.answer = clip_text(answer)
            row.ended_at = now_utc()
        self._epochs.pop(episode_id, None)
        log.debug("episode %s ended: %s", episode_id, value)
        return episode_info(row)

    @retried
    def episode(self, id_or_prefix: str) -> EpisodeInfo:
        """An episode by its id or a unique prefix of it; UserError when unknown or ambiguous."""
        with self.read_session() as session:
            return episode_info(resolve_id(session, EpisodeRow, id_or_prefix, "episode"))

    @retried
    def list_episodes(
        self,
        *,
        limit: int | None = 20,
        run_id: str | None = None,
        outcome: Outcome | str | None = None,
        status: EpisodeStatus | str | None = None,
        device: str | None = None,
    ) -> list[EpisodeInfo]:
        """Newest first. ``outcome="error"`` matches every ``error:<kind>``."""
        query = select(EpisodeRow)
        if run_id is not None:
            query = query.where(EpisodeRow.run_id == run_id)
        if outcome == "error":
            query = query.where(EpisodeRow.outcome.startswith("error:"))
        elif outcome is not None:
            query = query.where(EpisodeRow.outcome == str(outcome))
        if status is not None:
            query = query.where(EpisodeRow.status == EpisodeStatus(status).value)
        if device is not None:
            query = query.where(EpisodeRow.device == device)
        query = query.order_by(EpisodeRow.started_at.desc(), EpisodeRow.id).limit(limit)
        with self.read_session() as session:
            return [episode_info(row) for row in session.scalars(query)]

    @retried
    def mark_running_as(
        self,
        outcome: Outcome | str,
        *,
        device: str | None = None,
        started_before: datetime | None = None,
        detail: str = "left running: the process that ran it stopped before finishing",
    ) -> list[str]:
        """Crash recovery: end episodes still ``running`` with ``outcome``; returns their ids.

        With a shared database, pass ``device`` (or ``started_before``) so one host does not end another's work.
        """
        value = as_outcome(outcome)
        conditions = [EpisodeRow.status == EpisodeStatus.RUNNING.value]
        if device is not None:
            conditions.append(EpisodeRow.device == device)
        if started_before is not None:
            conditions.append(EpisodeRow.started_at < started_before)
        with self.write_session() as session:
            ids = list(session.scalars(select(EpisodeRow.id).where(*conditions).with_for_update()))
            if ids:
                session.execute(
                    update(EpisodeRow)
                    .where(EpisodeRow.id.in_(ids), EpisodeRow.status == EpisodeStatus.RUNNING.value)
                    .values(
                        status=EpisodeStatus.ENDED.value,
                        outcome=value,
                        outcome_detail=detail,
                        ended_at=now_utc(),
                    )
                )
        if ids:
            log.info("marked %d episode(s) left running as %s", len(ids), value)
        return sorted(ids)

    # ---------------------------------------------------------------------------------------------------- steps
    def record_step(
        self,
        episode_id: str,
        step: StepRecord,
        *,
        screenshot: bytes | Image.Image | None = None,
        hierarchy: str | None = None,
    ) -> StepInfo:
        """Write the step's files, then its row, and commit before returning."""
        validate_step(step)
        epoch = self._epochs.get(episode_id)
        until_done(self.outage, lambda retry: self._require_new_step(episode_id, step.index))
        written: list[Path] = []
        shot_rel = shot_sha = hierarchy_rel = None
        shot_size = None
        try:
            if screenshot is not None:
                data = as_jpeg(screenshot)
                shot_rel = f"{episode_id}/{screenshot_name(step.index)}"
                write_atomic(self.root / shot_rel, data)
                written.append(self.root / shot_rel)
                shot_sha, shot_size = sha256_bytes(data), len(data)
            if hierarchy is not None:
                hierarchy_rel = f"{episode_id}/{hierarchy_name(step.index)}"
                write_atomic(self.root / hierarchy_rel, hierarchy.encode("utf-8"))
                written.append(self.root / hierarchy_rel)
            row = step_row(episode_id, step, shot_rel, shot_sha, shot_size, hierarchy_rel)
            row.lease_epoch = epoch
            until_done(self.outage, lambda retry: self._add_step(episode_id, row, epoch, retry))
        except IntegrityError as exc:
            # Another writer recorded this index in the meantime; its files are the ones on disk now.
            raise StoreError(f"episode {episode_id} already has a step {step.index}") from exc
        except BaseException as exc:
            for path in written:
                path.unlink(missing_ok=True)
            if isinstance(exc, OSError):  # a file: disk full, read-only folder
                raise store_fault(exc, self.describe_location()) from exc
            raise
        return step_info(row)

    def _add_step(self, episode_id: str, row: StepRow, epoch: int | None, retry: bool) -> None:
        with self.write_connection() as conn:
            if retry and step_landed(conn, episode_id, row):
                return  # the outage hid a commit that went through
            add_step(conn, episode_id, row, epoch)

    def _require_new_step(self, episode_id: str, index: int) -> None:
        with self.read_connection() as conn:
            require_new_step(conn, episode_id, index)

    @retried
    def steps(self, episode_id: str) -> list[StepInfo]:
        """All steps of an episode (id or unique prefix), in index order."""
        with self.read_session() as session:
            full_id = resolve_id(session, EpisodeRow, episode_id, "episode").id
            rows = session.scalars(
                select(StepRow).where(StepRow.episode_id == full_id).order_by(StepRow.index)
            )
            return [step_info(row) for row in rows]

    @retried
    def step(self, episode_id: str, index: int) -> StepInfo:
        with self.read_session() as session:
            full_id = resolve_id(session, EpisodeRow, episode_id, "episode").id
            row = session.scalar(select(StepRow).where(StepRow.episode_id == full_id, StepRow.index == index))
            if row is None:
                raise UserError(
                    f"episode {full_id} has no step {index}",
                    hint=f"see its steps with `mobile-agent show {full_id}`",
                )
            return step_info(row)

    def screenshot_path(self, step: StepInfo) -> Path | None:
        """Absolute path of the step's JPEG; None when it has none or its stored path leads out of the store."""
        return inside_root(
            self.root, step.screenshot_path, f"screenshot of step {step.index} of {step.episode_id}"
        )

    def hierarchy_path(self, step: StepInfo) -> Path | None:
        return inside_root(
            self.root, step.hierarchy_path, f"hierarchy of step {step.index} of {step.episode_id}"
        )

    # -------------------------------------------------------------------------------------------------- devices
    @retried
    def upsert_device(
        self,
        serial: str,
        *,
        adb_server: str = DEFAULT_ADB_SERVER,
        model: str | None = None,
        android_version: str | None = None,
        notes: str | None = None,
    ) -> DeviceInfo:
        """Record that a phone was seen now. Fields left as None keep their stored value."""
        for attempt in range(2):
            try:
                with self.write_session() as session:
                    row = session.scalar(
                        select(DeviceRow)
                        .where(DeviceRow.serial == serial, DeviceRow.adb_server == adb_server)
                        .with_for_update()
                    )
                    now = now_utc()
                    if row is None:
                        row = DeviceRow(serial=serial, adb_server=adb_server, first_seen=now)
                        session.add(row)
                    row.last_seen = now
                    for name, value in (
                        ("model", model),
                        ("android_version", android_version),
                        ("notes", notes),
                    ):
                        if value is not None:
                            setattr(row, name, value)
                return device_info(row)
            except IntegrityError:
                if attempt:  # the second try finds the row another host just inserted
                    raise
        raise AssertionError("unreachable")

    @retried
    def devices(self) -> list[DeviceInfo]:
        with self.read_session() as session:
            rows = session.scalars(select(DeviceRow).order_by(DeviceRow.adb_server, DeviceRow.serial))
            return [device_info(row) for row in rows]

    # ------------------------------------------------------------------------------------------------ integrity
    @retried
    def check_integrity(self, *, verify_hashes: bool = True) -> list[str]:
        """Problems found, one sentence each; empty when the store is consistent."""
        with self.read_session() as session:
            return IntegrityChecker(session, self.root, verify_hashes=verify_hashes).run()

    # -------------------------------------------------------------------------------------------------- helpers
    @staticmethod
    def _fresh_id(session: Session, row_type: type[RowT]) -> str:
        for _ in range(8):
            candidate = secrets.token_hex(ID_LENGTH // 2)
            if session.get(row_type, candidate) is None:
                return candidate
        raise StoreError(
            "could not find a free id"
        )  # 8 collisions of 48 random bits: something else is wrong


__all__ = ["TrajectoryStore"]
