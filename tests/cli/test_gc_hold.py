"""`run` holds the cyclic garbage collector off until its first step, then freezes what start-up built."""

from __future__ import annotations

import gc

import pytest

from mobile_agent.cli.gc_hold import CollectorHold


@pytest.fixture(autouse=True)
def collector_as_found():
    was_on, frozen = gc.isenabled(), gc.get_freeze_count()
    yield
    if gc.get_freeze_count() > frozen:
        gc.unfreeze()
    (gc.enable if was_on else gc.disable)()


def test_off_until_the_first_step_then_survivors_frozen_and_thawed_on_exit() -> None:
    gc.enable()
    seen: list[str] = []
    with CollectorHold() as hold:
        assert not gc.isenabled()
        on_step = hold.released_by(seen.append)
        on_step("step 1")
        assert gc.isenabled() and gc.get_freeze_count() > 0
        frozen = gc.get_freeze_count()
        on_step("step 2")  # a later step changes nothing
        assert gc.get_freeze_count() == frozen
    assert seen == ["step 1", "step 2"]
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_an_error_before_any_step_turns_the_collector_back_on() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), CollectorHold():
        raise RuntimeError("no phone")
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_collector_someone_turned_off_stays_off_and_nothing_is_frozen() -> None:
    gc.disable()
    with CollectorHold() as hold:
        hold.released_by(None)("step 1")
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    assert not gc.isenabled()


def test_objects_frozen_by_someone_else_stay_frozen() -> None:
    gc.enable()
    gc.freeze()
    with CollectorHold() as hold:
        hold.release()
    assert gc.get_freeze_count() > 0
