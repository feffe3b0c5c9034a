"""Everything written to the store comes back field for field, files included."""

from __future__ import annotations

import dataclasses
import hashlib
import io
from datetime import datetime, timedelta, timezone

import pytest
from PIL import Image

from mobile_agent.actions import Action, Key, Outcome, Size
from mobile_agent.errors import StoreError
from mobile_agent.store.records import ActionSource, EpisodeStatus, RunStatus, StepRecord, StepTimings
from mobile_agent.store.store import TrajectoryStore

T0 = datetime(2025, 3, 1, 12, 30, 15, 123456, tzinfo=timezone.utc)


def full_step(index: int) -> StepRecord:
    return StepRecord(
        index=index,
        action=Action.swipe(10, 900, 10, 200, duration_ms=300),
        action_source=ActionSource.RULE,
        started_at=T0 + timedelta(seconds=index),
        ended_at=T0 + timedelta(seconds=index, milliseconds=850),
        screen=Size(1080, 2400),
        foreground_app="com.android.settings",
        foreground_activity=".Settings$WifiSettingsActivity",
        raw_reply="<think>scroll</think><action>swipe</action>",
        reasoning="the wifi entry is below the fold",
        thought="scroll down",
        guard_decisions=[
            {"guard": "safety", "decision": "allow"},
            {"guard": "loop", "decision": "hint", "n": 2},
        ],
        timings=StepTimings(
            screenshot_ms=41.5, model_ms=812.0, act_ms=120.25, settle_ms=300.0, total_ms=1290.5
        ),
        prompt_tokens=1834,
        completion_tokens=57,
        model_latency_ms=801.75,
        error_kind="parse",
        error_text="coordinate out of range",
        attempt=2,
    )


def test_step_round_trips_every_field(store: TrajectoryStore, episode, make_jpeg) -> None:
    shot = make_jpeg(3)
    recorded = store.record_step(
        episode.id, full_step(0), screenshot=shot, hierarchy="<hierarchy rotation='0'/>"
    )

    [loaded] = store.steps(episode.id)
    assert loaded == recorded
    record_fields = {f.name for f in dataclasses.fields(StepRecord)}
    for name in record_fields:
        assert getattr(loaded, name) == getattr(full_step(0), name), name
    assert loaded.started_at.tzinfo is not None
    assert loaded.episode_id == episode.id
    assert loaded.screenshot_path == f"{episode.id}/000.jpg"
    assert loaded.screenshot_sha256 == hashlib.sha256(shot).hexdigest()
    assert loaded.screenshot_bytes == len(shot)
    assert store.screenshot_path(loaded).read_bytes() == shot
    assert store.screenshot_path(loaded) == store.root / episode.id / "000.jpg"
    assert loaded.hierarchy_path == f"{episode.id}/000.xml"
    assert store.hierarchy_path(loaded).read_text(encoding="utf-8") == "<hierarchy rotation='0'/>"
    assert store.step(episode.id, 0) == loaded


def test_minimal_step_has_defaults_and_no_files(store: TrajectoryStore, episode) -> None:
    before = datetime.now(timezone.utc)
    info = store.record_step(episode.id, StepRecord(index=0, action=Action.press(Key.BACK)))
    assert info.action == Action.press("back")
    assert info.action_source is ActionSource.MODEL
    assert info.started_at >= before - timedelta(seconds=1)
    assert info.screenshot_path is None and info.hierarchy_path is None
    assert info.guard_decisions == [] and info.timings == StepTimings() and info.attempt == 1
    assert store.screenshot_path(info) is None and store.hierarchy_path(info) is None
    assert not (store.root / episode.id).exists()


def test_unparsed_step_keeps_error_and_no_action(store: TrajectoryStore, episode) -> None:
    store.record_step(
        episode.id,
        StepRecord(
            index=0,
            raw_reply="garbage",
            error_kind="parse",
            error_text="no action found",
            action_source="human",
        ),
    )
    [step] = store.steps(episode.id)
    assert step.action_source is ActionSource.HUMAN
    assert step.action is None and step.raw_reply == "garbage" and step.error_kind == "parse"


def test_every_action_kind_round_trips(store: TrajectoryStore, episode) -> None:
    actions = [
        Action.tap(1, 2, sensitive="pays money"),
        Action.double_tap(3, 4),
        Action.long_press(5, 6, duration_ms=800),
        Action.swipe(1, 2, 3, 4),
        Action.drag(5, 6, 7, 8, duration_ms=500),
        Action.type("你好, world"),
        Action.press(Key.ENTER),
        Action.launch("com.tencent.mm"),
        Action.wait(1000),
        Action.answer("42"),
        Action.finish("done"),
        Action.call_user("please log in"),
    ]
    for index, action in enumerate(actions):
        store.record_step(episode.id, StepRecord(index=index, action=action))
    assert [s.action for s in store.steps(episode.id)] == actions


def test_png_and_pillow_screenshots_are_stored_as_jpeg(store: TrajectoryStore, episode) -> None:
    png = io.BytesIO()
    Image.new("RGBA", (40, 80), (0, 128, 255, 255)).save(png, format="PNG")
    first = store.record_step(episode.id, StepRecord(index=0), screenshot=png.getvalue())
    second = store.record_step(episode.id, StepRecord(index=1), screenshot=Image.new("L", (40, 80), 200))
    for step in (first, second):
        data = store.screenshot_path(step).read_bytes()
        assert data[:3] == b"\xff\xd8\xff"
        assert hashlib.sha256(data).hexdigest() == step.screenshot_sha256
        with Image.open(store.screenshot_path(step)) as image:
            assert image.format == "JPEG" and image.size == (40, 80)


def test_unreadable_screenshot_is_refused_without_leaving_anything(store: TrajectoryStore, episode) -> None:
    with pytest.raises(StoreError, match="not a readable image"):
        store.record_step(episode.id, StepRecord(index=0), screenshot=b"definitely not an image")
    assert store.steps(episode.id) == []
    assert store.episode(episode.id).step_count == 0
    assert store.check_integrity() == []


def test_episode_round_trips_every_field(store: TrajectoryStore) -> None:
    run = store.create_run("nightly", {"devices": 4, "max_tokens": 512})
    source = store.start_episode("original", device="d1", family="autoglm", model="glm")
    started = store.start_episode(
        "order a coffee",
        device="192.168.1.20:5555",
        family="venus",
        model="ui-venus-2-7b",
        base_url="http://gpu-1:8000/v1",
        run_id=run.id,
        app="luckin",
        source_episode_id=source.id,
        meta={"seed": 7, "tags": ["a", "b"], "nested": {"k": 1.5}},
    )
    assert started.status is EpisodeStatus.RUNNING and started.is_running and started.outcome is None
    assert f"{started.status}|{started.status:>8}" == "running| running"
    assert store.episode(started.id) == started

    ended = store.finish_episode(started.id, Outcome.ANSWERED, detail="model answered", answer="¥18")
    loaded = store.episode(started.id)
    assert loaded == ended
    assert (loaded.task, loaded.device, loaded.family, loaded.model) == (
        "order a coffee",
        "192.168.1.20:5555",
        "venus",
        "ui-venus-2-7b",
    )
    assert loaded.base_url == "http://gpu-1:8000/v1"
    assert (loaded.run_id, loaded.app, loaded.source_episode_id) == (run.id, "luckin", source.id)
    assert loaded.meta == {"seed": 7, "tags": ["a", "b"], "nested": {"k": 1.5}}
    assert loaded.status is EpisodeStatus.ENDED and not loaded.is_running
    assert loaded.outcome == Outcome.ANSWERED and isinstance(loaded.outcome, Outcome)
    assert (loaded.outcome_detail, loaded.answer) == ("model answered", "¥18")
    assert loaded.ended_at is not None and loaded.duration_s is not None and loaded.duration_s >= 0
    assert len(loaded.id) == 12 and int(loaded.id, 16) >= 0


def test_error_outcome_and_bad_outcome(store: TrajectoryStore, episode) -> None:
    with pytest.raises(StoreError, match="unknown outcome"):
        store.finish_episode(episode.id, "fine")
    store.finish_episode(episode.id, Outcome.error("device_lost"))
    loaded = store.episode(episode.id)
    assert loaded.outcome == "error:device_lost" and loaded.outcome.is_error
    with pytest.raises(StoreError, match="already ended"):
        store.finish_episode(episode.id, Outcome.FINISHED)


def test_run_round_trip_and_finish(store: TrajectoryStore) -> None:
    run = store.create_run("batch-1", {"tasks": "tasks.yaml", "retries": 2, "path": store.root})
    assert run.status is RunStatus.RUNNING
    assert run.config == {"tasks": "tasks.yaml", "retries": 2, "path": str(store.root)}
    assert store.run(run.id[:5]) == run
    finished = store.finish_run(run.id, RunStatus.INTERRUPTED)
    assert finished.status is RunStatus.INTERRUPTED and finished.ended_at is not None
    assert store.list_runs() == [finished]


def test_secrets_never_reach_the_database(store: TrajectoryStore, store_root) -> None:
    config = {
        "api_key": "sk-live-1",
        "OPENAI_API_KEY": "sk-live-2",
        "model": {
            "name": "m",
            "apiKey": "sk-live-3",
            "max_tokens": 64,
            "headers": {"Authorization": "Bearer x"},
        },
        "endpoints": [{"url": "http://a:8000/v1", "token": "sk-live-4"}],
        "db": "postgresql://farm:hunter2@db:5432/farm",
        "client_secret": "s",
        "password": "p",
    }
    run = store.create_run("r", config)
    episode = store.start_episode(
        "t", device="d", family="f", model="m", base_url="http://user:sk-live-5@gpu:8000/v1", meta=config
    )
    store.record_step(
        episode.id, StepRecord(index=0, guard_decisions=[{"guard": "g", "access_token": "sk-live-6"}])
    )
    expected = {
        "model": {"name": "m", "max_tokens": 64, "headers": {}},
        "endpoints": [{"url": "http://a:8000/v1"}],
        "db": "postgresql://***@db:5432/farm",  # the whole userinfo: a bare user is often a token
    }
    assert store.run(run.id).config == expected
    assert store.episode(episode.id).meta == expected
    assert store.episode(episode.id).base_url == "http://***@gpu:8000/v1"
    assert store.steps(episode.id)[0].guard_decisions == [{"guard": "g"}]
    raw = b"".join(path.read_bytes() for path in store_root.glob("mobile_agent.db*"))
    for secret in (b"sk-live", b"hunter2", b"Bearer"):
        assert secret not in raw


def test_devices_upsert_keeps_first_seen_and_old_values(store: TrajectoryStore) -> None:
    first = store.upsert_device("R58M123", model="SM-G991B", android_version="14")
    again = store.upsert_device("R58M123", notes="cracked screen")
    assert again.first_seen == first.first_seen and again.last_seen >= first.last_seen
    assert (again.model, again.android_version, again.notes) == ("SM-G991B", "14", "cracked screen")
    other_host = store.upsert_device("R58M123", adb_server="10.0.0.7:5037")
    assert [(d.serial, d.adb_server) for d in store.devices()] == [
        ("R58M123", "10.0.0.7:5037"),
        ("R58M123", "127.0.0.1:5037"),
    ]
    assert other_host.model is None


def test_epoch_seconds_are_accepted_as_step_times(store: TrajectoryStore, episode) -> None:
    info = store.record_step(
        episode.id, StepRecord(index=0, started_at=1_700_000_000.25, ended_at=1_700_000_001.5)
    )
    assert info.started_at == datetime(2023, 11, 14, 22, 13, 20, 250000, tzinfo=timezone.utc)
    assert store.steps(episode.id)[0].ended_at == datetime(
        2023, 11, 14, 22, 13, 21, 500000, tzinfo=timezone.utc
    )


def test_step_timings_from_a_dict() -> None:
    timings = StepTimings.from_dict({"screenshot": 40, "model_ms": 800.5, "total": None})
    assert timings == StepTimings(screenshot_ms=40.0, model_ms=800.5)
    with pytest.raises(ValueError, match="unknown step timing"):
        StepTimings.from_dict({"thinking": 1})


def test_describe_location_names_database_and_files(store: TrajectoryStore) -> None:
    assert (
        store.describe_location()
        == f"sqlite:///{store.root / 'mobile_agent.db'} (screenshots under {store.root})"
    )
