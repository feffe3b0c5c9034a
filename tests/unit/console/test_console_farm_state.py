"""The console tells the farm's state as it is, over real HTTP: a run whose workers are gone reads stalled (not
running), derived at read time from the leases the store keeps."""

from __future__ import annotations

import re

import pytest

from mobile_agent.console.app import BackgroundConsole
from mobile_agent.store import phones as phone_db
from mobile_agent.store import queue as q
from mobile_agent.store.store import TrajectoryStore
from tests.unit.console.test_console_http import Client


@pytest.fixture
def client(store: TrajectoryStore):
    with BackgroundConsole(store, user="tester") as running:
        logged_in = Client(running)
        logged_in.login()
        yield logged_in


def _badges(html: str) -> list[str]:
    return re.findall(r'class="badge[^"]*"[^>]*>([^<]*)<', html)


def test_a_run_whose_workers_are_gone_reads_stalled(store: TrajectoryStore, client: Client) -> None:
    run = store.create_run("left behind", {})
    q.enqueue_tasks(store, run.id, [q.NewTask(i, f"t:{i}", f"task {i}") for i in range(2)])
    key = "127.0.0.1:15037/p1"
    assert phone_db.lease_device(store, key, "p1", "127.0.0.1:15037", worker="host:1:aa", lease_s=60)
    claim = q.claim_task(store, worker="host:1:aa", device=key, tags=(), run_ids=[run.id], lease_s=60)
    assert claim is not None and q.finish_task(store, claim, episode_id=None, outcome="finished")

    for path in ("/runs", f"/runs/{run.id}", "/"):  # its worker holds its phone: running
        response, body = client.request("GET", path)
        assert response.status == 200
        assert "running" in _badges(body.decode()) and "stalled" not in _badges(body.decode()), path

    phone_db.release_device(store, key, worker="host:1:aa")  # the batch stopped with a task left
    for path in ("/runs", f"/runs/{run.id}", "/"):
        _, body = client.request("GET", path)
        assert "stalled" in _badges(body.decode()) and "running" not in _badges(body.decode()), path
    assert store.run(run.id).status.value == "running"  # nothing was written to say so


def _phone_card(html: str, serial: str) -> str:
    match = re.search(
        rf'<article class="phone" data-serial="{re.escape(serial)}">(.*?)</article>', html, re.S
    )
    assert match, html
    return match.group(1)


def test_a_phone_not_heard_of_for_a_while_reads_gone(store: TrajectoryStore, client: Client) -> None:
    from datetime import timedelta

    from sqlalchemy import update

    from mobile_agent.actions import Outcome
    from mobile_agent.store.convert import now_utc
    from mobile_agent.store.schema import EpisodeRow

    for serial in ("demo-phone", "fresh-phone"):
        episode = store.start_episode("open settings", device=serial, family="f", model="m")
        store.finish_episode(episode.id, Outcome.FINISHED)
        phone_db.lease_device(store, f"a/{serial}", serial, "127.0.0.1:15037", worker="host:1:aa", lease_s=60)
        phone_db.release_device(store, f"a/{serial}", worker="host:1:aa")
    long_ago = now_utc() - timedelta(days=2)  # the demo ran two days ago; its phone left with it
    with store.write_session() as session:
        session.execute(
            update(EpisodeRow)
            .where(EpisodeRow.device == "demo-phone")
            .values(started_at=long_ago, ended_at=long_ago)
        )
        session.execute(
            update(phone_db.FarmDeviceRow)
            .where(phone_db.FarmDeviceRow.serial == "demo-phone")
            .values(updated_at=long_ago)
        )
    _, body = client.request("GET", "/phones")
    html = body.decode()
    demo, fresh = _phone_card(html, "demo-phone"), _phone_card(html, "fresh-phone")
    assert _badges(demo)[0] == "gone" and f"last seen {long_ago:%Y-%m-%d %H:%M:%S}" in demo
    assert _badges(fresh)[0] == "idle" and "last seen" not in fresh


def test_guard_chips_say_a_reason_or_nothing_after_the_guard(store: TrajectoryStore, client: Client) -> None:
    """A guard that allowed without a reason reads "allow validity", never "allow validity:" with nothing after."""
    from mobile_agent.actions import Action, Outcome
    from mobile_agent.store.records import StepRecord

    episode = store.start_episode("open settings", device="phone-0", family="f", model="m")
    decisions = [
        {"guard": "validity", "verdict": "allow", "reason": ""},
        {"guard": "loop", "verdict": "allow"},
        {"guard": "safety", "verdict": "ask", "reason": "pay in alipay"},
    ]
    store.record_step(
        episode.id, StepRecord(index=0, action=Action.tap(540, 2000), guard_decisions=decisions)
    )
    store.finish_episode(episode.id, Outcome.FINISHED)
    _, body = client.request("GET", f"/episodes/{episode.id}")
    chips = [
        re.sub(r"<[^>]+>", "", li).split()
        for li in re.findall(r'<ul class="guards">(.*?)</ul>', body.decode(), re.S)[0].split("<li>")[1:]
    ]
    assert chips == [["allow", "validity"], ["allow", "loop"], ["ask", "safety:", "pay", "in", "alipay"]]
