"""The store's transactions: sessions and Core connections that connect and begin before the caller's code runs,
waiting out an outage of the database (mobile_agent.store.outages), and that turn every driver error into a one-line
StoreError (mobile_agent.store.faults).

A failure while connecting or beginning is retried here (nothing of the caller's ran yet); one in the middle of the
caller's transaction becomes ``StoreInterrupted``, which ``@retried`` functions run again from the start.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from mobile_agent.store.faults import store_fault
from mobile_agent.store.outages import Outage, StoreInterrupted, is_transient

T = TypeVar("T")


class Transactions:
    """Hands out the store's sessions and connections (see the module docstring)."""

    def __init__(
        self,
        engine: Engine,
        write_engine: Engine,
        where: Callable[[], str],
        write_lock: AbstractContextManager[Any],
        read_lock: AbstractContextManager[Any],
        outage: Outage,
    ) -> None:
        self._engine = engine
        self._write_engine = write_engine
        self._reads = sessionmaker(engine, expire_on_commit=False)
        self._writes = sessionmaker(write_engine, expire_on_commit=False)
        self._where = where
        self._write_lock = write_lock
        self._read_lock = read_lock
        self.outage = outage

    # ------------------------------------------------------------------------------------------------ opening
    def _opened(self, open_: Callable[[], T], close: Callable[[T], None]) -> T:
        """``open_()`` until it succeeds, waiting out a transient failure (bounded by the outage)."""
        attempt = 0
        while True:
            try:
                return open_()
            except DBAPIError as exc:
                if not is_transient(exc):
                    raise store_fault(exc, self._where()) from exc
                self.outage.pause(exc, attempt)
                attempt += 1

    def _session(self, factory: sessionmaker[Session], write: bool) -> Session:
        def open_() -> Session:
            session = factory()
            try:
                if write:
                    session.begin()
                session.connection()  # connect (and BEGIN) now, before the caller's statements
            except BaseException:
                _quietly(session.close)
                raise
            return session

        return self._opened(open_, Session.close)

    def _connection(self, engine: Engine, write: bool) -> Connection:
        def open_() -> Connection:
            conn = engine.connect()
            try:
                if write:
                    conn.begin()
            except BaseException:
                _quietly(conn.close)
                raise
            return conn

        return self._opened(open_, Connection.close)

    @contextmanager
    def _mapped(self) -> Iterator[None]:
        """Driver errors in the caller's transaction (or its commit) as StoreErrors; an outage as
        StoreInterrupted; an IntegrityError (a race callers handle) as is."""
        try:
            yield
        except IntegrityError:
            raise
        except DBAPIError as exc:
            fault = store_fault(exc, self._where())
            if is_transient(exc):
                self.outage.failed(exc)
                raise StoreInterrupted(fault.message, hint=fault.hint) from exc
            raise fault from exc
        self.outage.back()

    # ----------------------------------------------------------------------------------------------- handing out
    @contextmanager
    def write_session(self) -> Iterator[Session]:
        with self._mapped(), self._write_lock:
            session = self._session(self._writes, write=True)
            try:
                yield session
                session.commit()
            except BaseException:
                _quietly(session.rollback)
                raise
            finally:
                _quietly(session.close)

    @contextmanager
    def read_session(self) -> Iterator[Session]:
        with self._mapped(), self._read_lock:
            session = self._session(self._reads, write=False)
            try:
                yield session
            finally:
                _quietly(session.close)

    @contextmanager
    def write_connection(self) -> Iterator[Connection]:
        with self._mapped(), self._write_lock:
            conn = self._connection(self._write_engine, write=True)
            try:
                yield conn
                conn.commit()
            except BaseException:
                _quietly(conn.rollback)
                raise
            finally:
                _quietly(conn.close)

    @contextmanager
    def read_connection(self) -> Iterator[Connection]:
        with self._mapped(), self._read_lock:
            conn = self._connection(self._engine, write=False)
            try:
                yield conn
            finally:
                _quietly(conn.close)


def _quietly(call: Callable[[], object]) -> None:
    """Roll back or close a session whose connection may be gone: nothing to report, the error that matters is
    already on its way."""
    try:
        call()
    except Exception:  # noqa: BLE001,S110 - a dead connection cannot roll back; the pool discards it
        pass


__all__ = ["Transactions"]
