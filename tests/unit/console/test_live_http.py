"""The live page's requests over real HTTP, without a phone: what is refused (no CSRF header, a foreign Origin, a
form instead of JSON, a broken body, an unknown phone or episode) and, for a phone whose adb server is gone, the
stream says why no frame comes instead of hanging silently."""

from __future__ import annotations

import http.client
import json

import pytest

from mobile_agent.console.app import BackgroundConsole
from mobile_agent.console.security import COOKIE, csrf_token
from mobile_agent.sim.farm import free_port
from mobile_agent.store import phones as phone_db


def call(console: BackgroundConsole, method: str, path: str, body: bytes | None = None, **headers: str):
    conn = http.client.HTTPConnection("127.0.0.1", console.port, timeout=10)
    conn.request(method, path, body=body, headers={"Cookie": f"{COOKIE}={console.token}", **headers})
    response = conn.getresponse()
    return response.status, response.read().decode()


@pytest.fixture
def console(store):
    dead = f"127.0.0.1:{free_port()}"  # nothing listens there
    phone_db.record_device_result(store, f"{dead}/GONE", "GONE", dead, ok=True)
    with BackgroundConsole(store) as running:
        running.dead_key = f"{dead}/GONE"
        yield running


def test_refusals(console) -> None:
    good = {"Content-Type": "application/json", "X-CSRF-Token": csrf_token(console.token)}
    take = json.dumps({"phone": console.dead_key, "viewer": "v1", "op": "take"}).encode()
    assert call(console, "GET", "/live?phone=nope")[0] == 404
    assert call(console, "GET", "/live?episode=nope")[0] == 404
    assert call(console, "POST", "/live/control", take, **{"Content-Type": "application/json"})[0] == 403
    assert call(console, "POST", "/live/control", take, **{**good, "X-CSRF-Token": "x" * 40})[0] == 403
    assert call(console, "POST", "/live/control", take, **{**good, "Origin": "http://evil.example"})[0] == 403
    form = {**good, "Content-Type": "application/x-www-form-urlencoded"}
    assert call(console, "POST", "/live/control", b"op=take", **form)[0] == 415
    assert call(console, "POST", "/live/control", b"{not json", **good)[0] == 400
    assert call(console, "POST", "/live/control", b'{"phone": "nope", "viewer": "v"}', **good)[0] == 404
    tap = json.dumps({"phone": console.dead_key, "viewer": "v1", "kind": "tap", "x": 0.5, "y": 0.5}).encode()
    status, text = call(console, "POST", "/live/input", tap, **good)
    assert status == 403 and "nobody holds control" in text  # no input without control
    status, text = call(console, "POST", "/live/control", take, **good)
    assert status == 200 and json.loads(text)["control"] == "you"
    other = json.dumps({"phone": console.dead_key, "viewer": "v2", "op": "take"}).encode()
    assert call(console, "POST", "/live/control", other, **good)[0] == 409
    release = json.dumps({"phone": console.dead_key, "viewer": "v1", "op": "release"}).encode()
    assert call(console, "POST", "/live/control", release, **good)[0] == 200


def test_a_gone_phone_says_why_on_the_stream(console) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", console.port, timeout=15)
    conn.request(
        "GET",
        f"/live/stream?phone={console.dead_key}&viewer=v1",
        headers={"Cookie": f"{COOKIE}={console.token}"},
    )
    response = conn.getresponse()
    assert response.status == 200
    assert response.getheader("content-type").startswith("multipart/x-mixed-replace")
    seen = b""
    while b"no frame from the phone" not in seen:
        chunk = response.read1(4096)
        assert chunk, "the stream ended without a word"
        seen += chunk
    assert b"text/plain" in seen
    conn.close()
