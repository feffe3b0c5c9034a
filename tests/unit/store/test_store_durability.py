"""Every step is committed as it happens; episodes left running by a dead process are found and ended."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone

import pytest

from mobile_agent.actions import Action, Outcome
from mobile_agent.errors import StoreError, UserError
from mobile_agent.store.records import EpisodeStatus, StepRecord
from mobile_agent.store.store import TrajectoryStore


def test_each_step_is_visible_to_another_store_before_the_episode_ends(
    store: TrajectoryStore, episode, store_root, make_jpeg
) -> None:
    with TrajectoryStore.open(root=store_root) as observer:
        for index in range(3):
            store.record_step(
                episode.id,
                StepRecord(index=index, action=Action.tap(index, index)),
                screenshot=make_jpeg(index),
            )
            seen = observer.steps(episode.id)
            assert [s.index for s in seen] == list(range(index + 1))
            assert observer.episode(episode.id).step_count == index + 1
            assert observer.screenshot_path(seen[-1]).read_bytes() == make_jpeg(index)
        assert observer.episode(episode.id).is_running


def test_a_killed_process_keeps_its_committed_steps(tmp_path) -> None:
    """A child process records two steps then dies by SIGKILL-equivalent os._exit: both steps survive."""
    root = tmp_path / "replays"
    script = textwrap.dedent(
        f"""
        import os
        from mobile_agent.actions import Action
        from mobile_agent.store.records import StepRecord
        from mobile_agent.store.store import TrajectoryStore
        store = TrajectoryStore.open(root={str(root)!r})
        ep = store.start_episode("t", device="dev-1", family="venus", model="m")
        for i in range(2):
            store.record_step(ep.id, StepRecord(index=i, action=Action.wait(100)), screenshot=b"\\xff\\xd8\\xff" + bytes([i]) * 50)
        print(ep.id, flush=True)
        os._exit(9)
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOBILE_AGENT_")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 9, done.stderr
    episode_id = done.stdout.strip()

    # Opening the store notices that the process which ran the episode is gone, and ends it with the reason.
    with TrajectoryStore.open(root=root) as store:
        assert [s.index for s in store.steps(episode_id)] == [0, 1]
        recovered = store.episode(episode_id)
        assert recovered.status is EpisodeStatus.ENDED and recovered.outcome == Outcome.INTERRUPTED
        assert recovered.ended_at is not None and "is gone" in (recovered.outcome_detail or "")
        assert "step 1 (wait)" in recovered.outcome_detail
        assert store.mark_running_as(Outcome.INTERRUPTED) == []
        assert store.check_integrity() == []


def test_mark_running_as_only_touches_running_episodes_that_match(store: TrajectoryStore) -> None:
    finished = store.start_episode("a", device="phone-1", family="f", model="m")
    store.finish_episode(finished.id, Outcome.FINISHED)
    mine = store.start_episode("b", device="phone-1", family="f", model="m")
    other_host = store.start_episode("c", device="phone-2", family="f", model="m")

    assert store.mark_running_as(Outcome.error("crashed"), device="phone-1") == [mine.id]
    assert store.episode(finished.id).outcome == Outcome.FINISHED
    assert store.episode(mine.id).outcome == "error:crashed"
    assert store.episode(other_host.id).is_running

    long_ago = datetime.now(timezone.utc) - timedelta(hours=1)
    assert store.mark_running_as(Outcome.INTERRUPTED, started_before=long_ago) == []
    assert store.mark_running_as(Outcome.INTERRUPTED) == [other_host.id]
    assert store.mark_running_as(Outcome.INTERRUPTED) == []


def test_no_step_into_an_ended_or_unknown_episode(store: TrajectoryStore, episode, make_jpeg) -> None:
    store.finish_episode(episode.id, Outcome.FINISHED)
    with pytest.raises(StoreError, match="already ended"):
        store.record_step(episode.id, StepRecord(index=0), screenshot=make_jpeg())
    with pytest.raises(StoreError, match="no episode"):
        store.record_step("0123456789ab", StepRecord(index=0))
    assert not (store.root / episode.id).exists()


def test_duplicate_index_is_refused_and_keeps_the_first_screenshot(
    store: TrajectoryStore, episode, make_jpeg
) -> None:
    first = store.record_step(episode.id, StepRecord(index=0), screenshot=make_jpeg(1))
    with pytest.raises(StoreError, match="already has a step 0"):
        store.record_step(episode.id, StepRecord(index=0), screenshot=make_jpeg(2))
    assert store.screenshot_path(first).read_bytes() == make_jpeg(1)
    assert store.episode(episode.id).step_count == 1
    assert store.check_integrity() == []


def test_bad_step_values_are_refused(store: TrajectoryStore, episode) -> None:
    with pytest.raises(StoreError):
        store.record_step(episode.id, StepRecord(index=-1))
    with pytest.raises(StoreError):
        store.record_step(episode.id, StepRecord(index=0, attempt=0))
    with pytest.raises(StoreError, match="unknown action source"):
        store.record_step(episode.id, StepRecord(index=0, action_source="robot"))  # type: ignore[arg-type]
    assert store.steps(episode.id) == []


def test_episode_ending_while_a_step_is_written_loses_only_that_step(
    store: TrajectoryStore, episode, make_jpeg, monkeypatch
) -> None:
    """The row write re-checks the episode inside its transaction and removes the files it wrote."""
    store.record_step(episode.id, StepRecord(index=0), screenshot=make_jpeg(0))
    real_check = store._require_new_step

    def check_then_end(episode_id: str, index: int) -> None:
        real_check(episode_id, index)
        store.finish_episode(episode_id, Outcome.INTERRUPTED)

    monkeypatch.setattr(store, "_require_new_step", check_then_end)
    with pytest.raises(StoreError, match="ended while step 1"):
        store.record_step(episode.id, StepRecord(index=1), screenshot=make_jpeg(1), hierarchy="<h/>")
    assert [s.index for s in store.steps(episode.id)] == [0]
    assert sorted(p.name for p in (store.root / episode.id).iterdir()) == ["000.jpg"]
    assert store.check_integrity() == []


def test_replay_needs_an_existing_source(store: TrajectoryStore) -> None:
    with pytest.raises(UserError, match="no episode"):
        store.start_episode("t", device="d", family="f", model="m", source_episode_id="ffffffffffff")
    with pytest.raises(StoreError, match="no such run"):
        store.start_episode("t", device="d", family="f", model="m", run_id="ffffffffffff")
