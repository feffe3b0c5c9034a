"""The console's edges (issue 23): the token's redirect stays on the console whatever the path looks like, and
numbers in a path or a query that no store could hold are a 404 or the last page, never a 500."""

from __future__ import annotations

import http.client
import urllib.parse

import pytest

from mobile_agent.actions import Action
from mobile_agent.console.app import BackgroundConsole
from mobile_agent.store.records import StepRecord
from mobile_agent.store.store import TrajectoryStore

HUGE = "9" * 40


@pytest.fixture
def console(store):
    with BackgroundConsole(store, user="tester") as running:
        yield running


def get(console: BackgroundConsole, path: str, cookie: str | None = None) -> tuple[int, str | None, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", console.port, timeout=10)
    conn.putrequest("GET", path, skip_accept_encoding=True)  # the path exactly as written, // and all
    if cookie:
        conn.putheader("Cookie", cookie)
    conn.endheaders()
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, response.getheader("location"), body


def login(console: BackgroundConsole) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", console.port, timeout=10)
    conn.request("GET", f"/?token={console.token}")
    response = conn.getresponse()
    response.read()
    conn.close()
    return response.getheader("set-cookie").split(";")[0]


@pytest.mark.parametrize(
    "path",
    [
        "//evil.example/x",
        "///evil.example/x",
        "/\\evil.example/x",
        "/%2F%2Fevil.example/x",
        "/%5Cevil.example",
        "//evil.example",
    ],
)
def test_the_token_redirect_never_leaves_the_console(console, path: str) -> None:
    status, location, _ = get(console, f"{path}?token={console.token}")
    assert status == 303
    assert location is not None and location.startswith("/")
    assert not location.startswith("//") and "\\" not in location, location
    parts = urllib.parse.urlsplit(location)
    assert parts.scheme == "" and parts.netloc == "", location


def test_the_token_redirect_keeps_the_page_and_the_other_query(console) -> None:
    status, location, _ = get(console, f"/runs?page=2&token={console.token}")
    assert (status, location) == (303, "/runs?page=2")


def test_huge_numbers_are_not_server_errors(store: TrajectoryStore, console) -> None:
    episode = store.start_episode("t", device="phone-0", family="f", model="m")
    store.record_step(episode.id, StepRecord(index=0, action=Action.tap(1, 1)))
    cookie = login(console)
    status, _, _ = get(console, f"/shots/{episode.id}/{HUGE}.jpg", cookie)
    assert status == 404
    status, _, _ = get(console, f"/shots/{episode.id}/-1.jpg", cookie)
    assert status == 404
    for page in ("/runs", f"/runs/{store.create_run('r').id}"):
        status, _, _ = get(console, f"{page}?page={HUGE}", cookie)
        assert status == 200, page
