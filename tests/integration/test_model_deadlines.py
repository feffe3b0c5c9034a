"""The model client's waits are bounded by the wall clock: the real OpenAI client against the simulated model's
hang and trickle faults, with and without a caller's deadline."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from mobile_agent.actions import Action
from mobile_agent.errors import ConfigError, DeadlineExceeded, ModelUnavailable
from mobile_agent.model.client import ModelClient
from mobile_agent.sim.servers.model_server import Script, SimModelServer, Turn, load_script
from mobile_agent.waits.deadlines import Abandoned, Deadline, call_within

MESSAGES = [{"role": "user", "content": "drill"}]


def _server(**fault) -> SimModelServer:
    turn = Turn(action=Action.finish("done"), **fault)
    return SimModelServer(scripts=[Script(task="drill", turns=(turn,) * 8)], model_name="sim")


def _request_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "model-request"]


@pytest.mark.parametrize("fault", [{"hang": True}, {"trickle_ms": 300}], ids=["hang", "trickle"])
def test_the_callers_deadline_ends_the_call_with_its_retries(fault):
    with (
        _server(**fault) as server,
        ModelClient([server.base_url], "sim", timeout=1.5, backoff_s=0.05) as client,
    ):
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded) as err:
            client.complete(MESSAGES, deadline=Deadline.after(2.5, "the test's deadline"))
        took = time.monotonic() - started
        assert 2.4 < took < 3.0, took
        assert "ran past the test's deadline" in err.value.message
    deadline = time.monotonic() + 3
    while _request_threads() and time.monotonic() < deadline:  # the cut connections end their threads
        time.sleep(0.05)
    assert _request_threads() == []


def test_without_a_deadline_the_total_timeout_bounds_the_retries():
    with _server(trickle_ms=200) as server:
        client = ModelClient(
            [server.base_url], "sim", timeout=1.0, total_timeout=2.0, max_retries=10, backoff_s=0.05
        )
        started = time.monotonic()
        with pytest.raises(ModelUnavailable) as err:
            client.complete(MESSAGES)
        assert time.monotonic() - started < 2.6
        assert "within 2 s" in err.value.message and "timed out" in err.value.message
        client.close()


def test_a_slow_but_steady_reply_inside_the_bounds_is_read_whole():
    with _server(trickle_ms=1) as server, ModelClient([server.base_url], "sim", timeout=30) as client:
        reply = client.complete(MESSAGES, deadline=Deadline.after(30, "the test's deadline"))
    assert "Finished" in reply.text and reply.attempts == 1


def test_call_within_returns_raises_and_abandons():
    assert call_within(lambda: 7, 1) == 7
    with pytest.raises(KeyError):
        call_within(lambda: {}["x"], 1)
    freed = threading.Event()
    started = time.monotonic()
    with pytest.raises(Abandoned):
        call_within(lambda: freed.wait(5), 0.2, on_abandon=freed.set)
    assert time.monotonic() - started < 1


def test_deadlines_bound_and_pick_the_sooner():
    near, far = Deadline.after(1, "near"), Deadline.after(100, "far")
    assert near.sooner(far) is near and far.sooner(near) is near and far.sooner(None) is far
    assert near.bound(60) <= 1 and far.bound(5) == 5
    assert Deadline.never().bound(3) == 3 and not Deadline.never().expired


@pytest.mark.parametrize(
    "turn, message",
    [("hang: yes please", "hang must be true or false"), ("trickle_ms: 0", "trickle_ms must be an integer")],
)
def test_bad_fault_values_name_the_file_and_line(tmp_path: Path, turn: str, message: str):
    path = tmp_path / "script.yaml"
    path.write_text(f"task: t\nturns:\n  - action: {{kind: back}}\n    {turn}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_script(path)
    assert message in err.value.message and ":4:" in err.value.message
