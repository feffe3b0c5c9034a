"""A single run's phone lease (mobile_agent.agent.phone_hold): when another process takes it over, the renewal
thread sets the episode's stop flag with who has the phone, and the lease is not given back by the displaced run."""

from __future__ import annotations

import time

import pytest

from mobile_agent.agent import phone_hold
from mobile_agent.agent.config import EpisodeStopped
from mobile_agent.agent.phone_hold import PhoneHold
from mobile_agent.store import phones as phone_db
from mobile_agent.store.store import TrajectoryStore

SERIAL, ADB = "emulator-7001", "127.0.0.1:47001"
OTHER = "otherhost:4242:1"  # a live process on another host, as far as this one can tell


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.delenv("MOBILE_AGENT_DB", raising=False)
    monkeypatch.setattr(phone_hold, "HEARTBEAT_S", 0.05)  # renew often: the test waits for a renewal
    with TrajectoryStore.open(root=tmp_path / "replays") as s:
        yield s


def _wait_until(condition, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_a_lease_taken_over_sets_the_stop_flag_naming_the_new_holder_and_is_not_released(store):
    hold = PhoneHold(store, SERIAL, ADB).acquire()
    try:
        assert not hold.lost.is_set()
        taken = phone_db.lease_device(
            store, hold.key, SERIAL, hold.adb, worker=OTHER, lease_s=60, dead_workers=[hold.me]
        )
        assert taken
        assert _wait_until(hold.lost.is_set), "the renewal never noticed the takeover"
        assert "taken over" in hold.lost.reason and "host otherhost pid 4242" in hold.lost.reason
        with pytest.raises(EpisodeStopped) as stopped:
            hold.lost.check()
        assert stopped.value.detail == hold.lost.reason
        assert isinstance(stopped.value, KeyboardInterrupt)  # the path Ctrl-C takes through the loop
    finally:
        hold.release()
    assert phone_db.farm_device(store, hold.key).worker == OTHER  # still the new holder's


def test_a_lease_kept_is_renewed_without_stopping_and_released_at_the_end(store):
    hold = PhoneHold(store, SERIAL, ADB).acquire()
    before = phone_db.farm_device(store, hold.key).lease_until
    try:
        assert _wait_until(lambda: phone_db.farm_device(store, hold.key).lease_until != before)
        assert not hold.lost.is_set()
        hold.lost.check()  # no stop
    finally:
        hold.release()
    assert not phone_db.farm_device(store, hold.key).busy()
