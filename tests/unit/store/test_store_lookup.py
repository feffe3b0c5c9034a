"""Finding episodes: unique id prefixes, listing with filters, newest first."""

from __future__ import annotations

import itertools

import pytest

from mobile_agent.actions import Outcome
from mobile_agent.errors import UserError
from mobile_agent.store.records import StepRecord
from mobile_agent.store.store import TrajectoryStore


@pytest.fixture
def fixed_ids(monkeypatch: pytest.MonkeyPatch):
    """Make the store hand out the given ids in order, so prefixes collide on purpose."""

    def install(*ids: str) -> None:
        supply = itertools.chain(ids)
        monkeypatch.setattr("mobile_agent.store.store.secrets.token_hex", lambda _n: next(supply))

    return install


def start(store: TrajectoryStore, task: str = "t", **kw):
    kw.setdefault("device", "d")
    return store.start_episode(task, family="venus", model="m", **kw)


def test_unique_prefix_finds_the_episode(store: TrajectoryStore, fixed_ids) -> None:
    fixed_ids("abc123000000", "abd999000000")
    first, second = start(store, "first"), start(store, "second")
    assert store.episode("abc").id == first.id
    assert store.episode("abd9").id == second.id
    assert (
        store.episode("ABC123000000").id == first.id
    )  # ids are typed by people: case and spaces do not matter
    assert store.episode("  abd  ").id == second.id
    assert [s.index for s in store.steps("abc")] == []


def test_ambiguous_prefix_names_the_candidates(store: TrajectoryStore, fixed_ids) -> None:
    fixed_ids("abc123000000", "abc999000000")
    start(store), start(store)
    with pytest.raises(UserError) as caught:
        store.episode("abc")
    assert "ambiguous" in caught.value.message
    assert "abc123000000" in caught.value.message and "abc999000000" in caught.value.message
    assert caught.value.hint and caught.value.exit_code == 2


def test_full_id_wins_over_a_longer_id_with_the_same_start(store: TrajectoryStore, fixed_ids) -> None:
    fixed_ids("abc", "abcdef000000")
    short, _long = start(store), start(store)
    assert store.episode("abc").id == short.id


@pytest.mark.parametrize("text", ["fff", "zz-top", "", "12%", "a_b"])
def test_unknown_or_malformed_ids_are_user_errors(store: TrajectoryStore, episode, text: str) -> None:
    if episode.id.startswith("fff"):
        pytest.skip("random id happens to start with fff")
    with pytest.raises(UserError) as caught:
        store.episode(text)
    assert caught.value.hint
    with pytest.raises(UserError):
        store.steps(text)


def test_list_episodes_newest_first_with_filters(store: TrajectoryStore) -> None:
    run = store.create_run("batch", {})
    done = start(store, "a", run_id=run.id)
    store.finish_episode(done.id, Outcome.FINISHED)
    crashed = start(store, "b", run_id=run.id, device="phone-2")
    store.finish_episode(crashed.id, Outcome.error("device_lost"))
    looped = start(store, "c")
    store.finish_episode(looped.id, Outcome.LOOP)
    running = start(store, "d", device="phone-2")

    assert [e.task for e in store.list_episodes()] == ["d", "c", "b", "a"]
    assert [e.task for e in store.list_episodes(limit=2)] == ["d", "c"]
    assert [e.task for e in store.list_episodes(run_id=run.id)] == ["b", "a"]
    assert [e.task for e in store.list_episodes(outcome=Outcome.FINISHED)] == ["a"]
    assert [e.task for e in store.list_episodes(outcome="error")] == ["b"]
    assert [e.task for e in store.list_episodes(outcome="error:device_lost")] == ["b"]
    assert [e.id for e in store.list_episodes(status="running")] == [running.id]
    assert [e.task for e in store.list_episodes(device="phone-2")] == ["d", "b"]
    assert len(store.list_episodes(limit=None)) == 4


def test_run_prefix_lookup(store: TrajectoryStore, fixed_ids) -> None:
    fixed_ids("aaaa00000000", "aaab00000000")
    first = store.create_run("one", {})
    store.create_run("two", {})
    assert store.run("aaaa").name == "one" and store.run(first.id) == first
    with pytest.raises(UserError, match="ambiguous"):
        store.run("aaa")
    with pytest.raises(UserError, match="no run"):
        store.run("b")


def test_step_lookup_by_index(store: TrajectoryStore, episode) -> None:
    store.record_step(episode.id, StepRecord(index=0))
    assert store.step(episode.id[:6], 0).index == 0
    with pytest.raises(UserError, match="no step 5"):
        store.step(episode.id, 5)
