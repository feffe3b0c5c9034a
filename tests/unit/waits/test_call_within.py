"""call_within on reused helper threads: bounds kept, hung calls abandoned without holding up later ones."""

from __future__ import annotations

import threading
import time

import pytest

from mobile_agent.waits.deadlines import IDLE_NAME, Abandoned, call_within


def test_results_and_exceptions_come_back_to_the_caller():
    assert call_within(lambda: 7, 1) == 7
    with pytest.raises(KeyError):
        call_within(lambda: {}["x"], 1)
    assert call_within(lambda: None, 1) is None


def test_sequential_calls_reuse_one_helper_thread():
    seen = {call_within(threading.get_ident, 1) for _ in range(20)}
    assert len(seen) == 1 and threading.get_ident() not in seen


def test_the_helper_is_named_after_the_call_while_it_runs_and_idle_after():
    assert call_within(lambda: threading.current_thread().name, 1, name="adb-probe") == "adb-probe"
    assert not [t for t in threading.enumerate() if t.name == "adb-probe"]
    assert any(t.name == IDLE_NAME for t in threading.enumerate())


def test_a_hung_call_does_not_starve_the_next_one():
    release = threading.Event()
    hung_on: list[int] = []

    def hang() -> None:
        hung_on.append(threading.get_ident())
        release.wait(10)

    started = time.monotonic()
    with pytest.raises(Abandoned):
        call_within(hang, 0.2, name="hung")
    assert time.monotonic() - started < 1
    try:
        for _ in range(5):  # each one is answered at once, on a thread other than the hung one
            began = time.monotonic()
            ident = call_within(threading.get_ident, 2)
            assert time.monotonic() - began < 1 and ident != hung_on[0]
        assert [t for t in threading.enumerate() if t.name == "hung"]  # still busy, never handed a new call
    finally:
        release.set()


def test_the_abandon_hook_runs_and_the_caller_never_waits_past_the_bound():
    freed = threading.Event()
    started = time.monotonic()
    with pytest.raises(Abandoned):
        call_within(lambda: freed.wait(5), 0.2, on_abandon=freed.set)
    assert freed.is_set() and time.monotonic() - started < 1
    with pytest.raises(Abandoned):
        call_within(lambda: time.sleep(0.5), 0)


def test_calls_from_many_threads_at_once_each_get_their_own_answer():
    results: dict[int, int] = {}

    def caller(n: int) -> None:
        results[n] = call_within(lambda: (time.sleep(0.05), n * n)[1], 5)

    callers = [threading.Thread(target=caller, args=(n,)) for n in range(12)]
    for t in callers:
        t.start()
    for t in callers:
        t.join(10)
    assert results == {n: n * n for n in range(12)}
