"""Shared test set-up for the whole suite.

Keep this file small: fixtures that only one area needs live in that area's conftest.py.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy.engine import make_url

DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/test"


@pytest.fixture(scope="session", autouse=True)
def _private_disk_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The suite's processes share one cache folder of their own, never the user's ~/.cache/mobile-agent."""
    os.environ["MOBILE_AGENT_CACHE"] = str(tmp_path_factory.mktemp("mobile-agent-cache"))


@pytest.fixture(autouse=True)
def _environment_restored() -> Iterator[None]:
    """What a test (or a command it runs in-process) puts in os.environ ends with the test."""
    saved = dict(os.environ)
    yield
    for key in set(os.environ) - set(saved):
        del os.environ[key]
    os.environ.update(saved)


@pytest.fixture
def free_tcp_port() -> int:
    """A loopback TCP port that nothing listens on right now (never 5555-5585, which adb servers probe)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if not 5555 <= port <= 5585:
            return port


def _libpq_dsn(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """The PostgreSQL URL for tests marked ``postgres``: env MOBILE_AGENT_TEST_PG, else the local ``test``
    database. Skips, saying why, when psycopg 3 is missing or the server cannot be reached."""
    psycopg = pytest.importorskip(
        "psycopg", reason="psycopg 3 is not installed (pip install 'psycopg[binary]')"
    )
    url = os.environ.get("MOBILE_AGENT_TEST_PG") or DEFAULT_PG
    try:
        psycopg.connect(_libpq_dsn(url), connect_timeout=3).close()
    except psycopg.Error as exc:
        shown = make_url(url).render_as_string(hide_password=True)
        pytest.skip(
            f"no PostgreSQL server at {shown} ({str(exc).strip().splitlines()[0]}); set MOBILE_AGENT_TEST_PG"
        )
    return url


@contextmanager
def _private_schema(server: str) -> Iterator[str]:
    """A URL whose search_path is a fresh private schema on ``server``, dropped on exit."""
    import psycopg

    schema = f"mobile_agent_test_{secrets.token_hex(4)}"
    with psycopg.connect(_libpq_dsn(server), autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    url = make_url(server).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with psycopg.connect(_libpq_dsn(server), autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture
def pg_url(postgres_server: str) -> Iterator[str]:
    """A URL whose search_path is a fresh private schema (dropped after), so tests never see each other's rows."""
    with _private_schema(postgres_server) as url:
        yield url


@pytest.fixture(scope="module")
def module_pg_url(postgres_server: str) -> Iterator[str]:
    """``pg_url`` shared by the tests of one module (a scenario run once and read by several tests)."""
    with _private_schema(postgres_server) as url:
        yield url
