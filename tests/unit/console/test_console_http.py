"""The console over real HTTP (uvicorn on a free loopback port): the token and its cookie, CSRF on every form,
model text escaped, answers recorded with who, and server-sent events when a step is recorded."""

from __future__ import annotations

import http.client
import io
import json
import re
import threading
import time
import urllib.parse

import pytest
from PIL import Image

from mobile_agent.actions import Action, Outcome
from mobile_agent.console.app import BackgroundConsole
from mobile_agent.console.security import csrf_token, load_token
from mobile_agent.errors import UserError
from mobile_agent.store import answers as answer_db
from mobile_agent.store import pauses
from mobile_agent.store.records import StepRecord
from mobile_agent.store.store import TrajectoryStore

EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def jpeg() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (1080, 2400), (200, 220, 240)).save(out, "JPEG")
    return out.getvalue()


def paused_payment(store: TrajectoryStore) -> str:
    run = store.create_run("pay run")
    episode = store.start_episode("pay 12 yuan", device="phone-0", family="f", model="m", run_id=run.id)
    store.record_step(
        episode.id,
        StepRecord(index=0, thought=EVIL, action=Action.tap(540, 2000), raw_reply=EVIL),
        screenshot=jpeg(),
    )
    store.finish_episode(episode.id, Outcome.NEEDS_USER)
    pauses.create_pause(
        store,
        pauses.PauseRecord(
            episode.id,
            0,
            "confirm",
            f"The agent is about to PAY in alipay.\n  action: tap(540, 2000)\n  element: {EVIL}",
            device="phone-0",
            reserve_s=60,
            pending_action=Action.tap(540, 2000),
            decision={"guard": "safety", "verdict": "ask", "kind": "pay", "element": EVIL, "app": "alipay"},
        ),
    )
    return episode.id


class Client:
    def __init__(self, console: BackgroundConsole) -> None:
        self.console = console
        self.cookie: str | None = None

    def request(self, method: str, path: str, body: dict | None = None, headers: dict | None = None):
        conn = http.client.HTTPConnection("127.0.0.1", self.console.port, timeout=10)
        sent = dict(headers or {})
        if self.cookie:
            sent["Cookie"] = self.cookie
        data = None
        if body is not None:
            data = urllib.parse.urlencode(body, doseq=True)
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        conn.request(method, path, body=data, headers=sent)
        response = conn.getresponse()
        text = response.read()
        conn.close()
        return response, text

    def login(self) -> None:
        response, _ = self.request("GET", f"/?token={self.console.token}")
        assert response.status == 303 and response.getheader("location") == "/"
        cookie = response.getheader("set-cookie")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        self.cookie = cookie.split(";")[0]


@pytest.fixture
def console(store):
    with BackgroundConsole(store, user="tester") as running:
        yield running


def test_every_request_needs_the_token(store, console) -> None:
    client = Client(console)
    for path in ("/", "/inbox", "/phones", "/runs", "/static/console.js", "/events", "/shots/x/0.jpg"):
        response, _ = client.request("GET", path)
        assert response.status == 401, path
    response, _ = client.request("GET", "/?token=wrong")
    assert response.status == 403
    response, _ = client.request("GET", "/", headers={"Cookie": "mobile_agent_console=wrong"})
    assert response.status == 403
    response, _ = client.request("POST", "/inbox/answer", body={"episode": "x", "reply": "yes"})
    assert response.status == 401
    client.login()
    response, body = client.request("GET", "/")
    assert response.status == 200 and b"Waiting for a person" in body
    assert "script-src 'self'" in response.getheader("content-security-policy")
    assert response.getheader("x-frame-options") == "DENY"


def test_model_text_is_escaped_and_the_inbox_shows_the_question(store, console) -> None:
    episode_id = paused_payment(store)
    client = Client(console)
    client.login()
    for path in ("/", "/inbox", f"/episodes/{episode_id}", f"/runs/{store.episode(episode_id).run_id}"):
        response, body = client.request("GET", path)
        html = body.decode()
        assert response.status == 200, path
        assert "<script>alert" not in html and "<img src=x" not in html, path
        assert re.findall(r"<script[^>]*>", html) == ['<script src="/static/console.js" defer>'], path
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html or "&lt;script&gt;" in html
    response, body = client.request("GET", "/inbox")
    assert (
        f"/questions/{episode_id}.jpg" in body.decode() and b"Approve" in body and b"tap(540, 2000)" in body
    )
    response, shot = client.request("GET", f"/questions/{episode_id}.jpg?w=240")
    assert response.status == 200 and response.getheader("content-type") == "image/jpeg"
    assert Image.open(io.BytesIO(shot)).width == 240
    response, _ = client.request("GET", f"/shots/{episode_id}/0.jpg?w=1080")
    assert response.status == 200
    response, _ = client.request("GET", "/shots/nosuch/0.jpg")
    assert response.status == 404
    response, body = client.request("GET", "/episodes/nosuch")
    assert response.status == 404 and b"nosuch" in body
    response, body = client.request("GET", "/inbox", headers={"X-Console-Partial": "1"})
    assert not body.lstrip().startswith(b"<!doctype") and b"Inbox" in body


def test_forms_need_the_csrf_field_and_answers_record_who(store, console) -> None:
    episode_id = paused_payment(store)
    client = Client(console)
    client.login()
    form = {"episode": episode_id, "reply": "yes", "next": "/inbox"}
    response, _ = client.request("POST", "/inbox/answer", body=form)
    assert response.status == 403  # no CSRF field
    response, _ = client.request("POST", "/inbox/answer", body={**form, "csrf": "0" * 40})
    assert response.status == 403
    good = {**form, "csrf": csrf_token(console.token)}
    origin = {"Origin": "http://evil.example"}
    response, _ = client.request("POST", "/inbox/answer", body=good, headers=origin)
    assert response.status == 403  # another site's page
    assert answer_db.answers_of_episode(store, episode_id) == []  # nothing recorded by any of these
    response, _ = client.request("POST", "/inbox/answer", body={**good, "reply": "maybe"})
    assert response.status == 303 and "not+answered" in response.getheader("location")
    response, _ = client.request("POST", "/inbox/answer", body={**good, "next": "//evil.example/"})
    assert response.status == 303 and response.getheader("location").startswith("/inbox?")
    [got] = answer_db.answers_of_episode(store, episode_id)
    assert got.reply == "yes" and got.replied_by.startswith("tester (console, 127.0.0.1") and got.replied_at
    response, body = client.request("GET", "/inbox")
    assert b"answered yes by tester" in body


def test_a_recorded_step_reaches_an_open_event_stream_within_a_second(store, console) -> None:
    episode = store.start_episode("watch me", device="phone-1", family="f", model="m")
    client = Client(console)
    client.login()
    conn = http.client.HTTPConnection("127.0.0.1", console.port, timeout=10)
    conn.request("GET", "/events", headers={"Cookie": client.cookie})
    response = conn.getresponse()
    assert response.status == 200 and response.getheader("content-type").startswith("text/event-stream")
    assert response.readline().startswith(b"retry:")
    response.readline()
    seen: list[float] = []

    def read() -> None:
        while True:
            line = response.readline()
            if not line or line.startswith(b"event: change"):
                seen.append(time.monotonic())
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    time.sleep(0.5)
    t0 = time.monotonic()
    store.record_step(episode.id, StepRecord(index=0, thought="hello"))
    reader.join(5)
    conn.close()
    assert seen and seen[0] - t0 < 1.0, seen


def test_the_token_file(tmp_path) -> None:
    path = tmp_path / "token"
    first = load_token(path)
    assert load_token(path) == first and len(first) >= 16
    assert (path.stat().st_mode & 0o777) == 0o600
    assert load_token(None) != load_token(None)  # a new one per start
    path.write_text("short\n")
    with pytest.raises(UserError, match="no usable token"):
        load_token(path)
    json.dumps(first)
