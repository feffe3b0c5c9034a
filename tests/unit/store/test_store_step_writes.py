"""The per-step writes on prepared statements: a completion keeps what it is not given, secrets stay out of the
row, and the loop's per-step heartbeat is written at most once per ``min_gap_s`` (the timer thread's always)."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select, update

from mobile_agent.actions import Action
from mobile_agent.privacy.redact import register_secret
from mobile_agent.store.convert import now_utc
from mobile_agent.store.intents import complete_step
from mobile_agent.store.owners import DONE, FAILED, INTENT, Heartbeat
from mobile_agent.store.records import StepRecord, StepTimings
from mobile_agent.store.schema import EpisodeRow


def _heartbeat_at(store, episode_id: str):
    with store.read_session() as session:
        return session.scalar(select(EpisodeRow.heartbeat_at).where(EpisodeRow.id == episode_id))


def _age_heartbeat(store, episode_id: str) -> None:
    with store.write_session() as session:
        session.execute(
            update(EpisodeRow)
            .where(EpisodeRow.id == episode_id)
            .values(heartbeat_at=now_utc() - timedelta(seconds=30))
        )


def test_a_completion_sets_what_it_is_given_and_keeps_the_rest(store) -> None:
    episode = store.start_episode("t", device="d", family="f", model="m")
    intent = StepRecord(index=0, action=Action.tap(1, 2), timings=StepTimings(act_ms=5.0), status=INTENT)
    store.record_step(episode.id, intent)
    store.record_step(episode.id, StepRecord(index=1, action=Action.tap(3, 4), status=INTENT))
    complete_step(store, episode.id, 0, FAILED, error_kind="act", error_text="the tap failed")
    complete_step(store, episode.id, 1, DONE, act_ms=7.0, settle_ms=8.0, total_ms=9.0)
    failed, done = store.steps(episode.id)
    assert failed.status == FAILED and failed.timings.act_ms == 5.0 and failed.timings.settle_ms is None
    assert (failed.error_kind, failed.error_text) == ("act", "the tap failed") and failed.ended_at is not None
    assert done.status == DONE and (done.timings.act_ms, done.timings.settle_ms, done.timings.total_ms) == (
        7.0,
        8.0,
        9.0,
    )
    assert done.error_kind is None and done.ended_at is not None
    assert store.episode(episode.id).step_count == 2


def test_no_secret_reaches_a_completed_step(store) -> None:
    register_secret("sk-complete-step-424242")
    episode = store.start_episode("t", device="d", family="f", model="m")
    store.record_step(episode.id, StepRecord(index=0, action=Action.tap(1, 2), status=INTENT))
    complete_step(store, episode.id, 0, FAILED, error_kind="act", error_text="echo sk-complete-step-424242")
    assert "sk-complete-step-424242" not in (store.steps(episode.id)[0].error_text or "")


def test_the_per_step_heartbeat_is_written_at_most_once_per_gap(store) -> None:
    episode = store.start_episode("t", device="d", family="f", model="m")
    heartbeat = Heartbeat(store, episode.id, interval_s=60, min_gap_s=60)  # the timer thread is not started
    _age_heartbeat(store, episode.id)
    old = _heartbeat_at(store, episode.id)
    heartbeat.beat()
    first = _heartbeat_at(store, episode.id)
    assert first > old  # the first beat always writes
    _age_heartbeat(store, episode.id)
    aged = _heartbeat_at(store, episode.id)
    heartbeat.beat()  # within the gap: not written again
    assert _heartbeat_at(store, episode.id) == aged
    heartbeat.beat(force=True)  # the timer thread's beat
    assert _heartbeat_at(store, episode.id) > aged


def test_without_a_gap_every_beat_is_written(store) -> None:
    episode = store.start_episode("t", device="d", family="f", model="m")
    heartbeat = Heartbeat(store, episode.id, min_gap_s=0)
    for _ in range(2):
        _age_heartbeat(store, episode.id)
        aged = _heartbeat_at(store, episode.id)
        heartbeat.beat()
        assert _heartbeat_at(store, episode.id) > aged
