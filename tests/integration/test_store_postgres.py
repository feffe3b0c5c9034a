"""The trajectory store on a real PostgreSQL server (psycopg 3), each test in a private schema that is dropped after.

Server and private schema: the ``pg_url`` fixture of tests/conftest.py (env MOBILE_AGENT_TEST_PG; skips when the
server cannot be reached).
"""

from __future__ import annotations

import hashlib
import io
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

import pytest
from PIL import Image
from sqlalchemy import text

from mobile_agent.actions import Action, Key, Outcome, Size
from mobile_agent.errors import UserError
from mobile_agent.store.records import ActionSource, EpisodeStatus, StepRecord, StepTimings
from mobile_agent.store.store import TrajectoryStore

pytestmark = pytest.mark.postgres


@pytest.fixture
def store(pg_url: str, tmp_path: Path) -> Iterator[TrajectoryStore]:
    with TrajectoryStore.open(pg_url, root=tmp_path / "shots") as opened:
        yield opened


def jpeg(seed: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (30, 60), (seed % 256, 40, 200)).save(out, format="JPEG")
    return out.getvalue()


def test_tables_live_in_the_private_schema(store: TrajectoryStore) -> None:
    assert not store.is_sqlite
    with store.read_session() as session:
        schema = session.execute(text("SELECT current_schema()")).scalar()
        tables = set(
            session.execute(
                text("SELECT table_name FROM information_schema.tables WHERE table_schema = :s"),
                {"s": schema},
            ).scalars()
        )
    assert schema.startswith("mobile_agent_test_")
    assert {"runs", "episodes", "steps", "devices", "schema_info"} <= tables


def test_full_round_trip(store: TrajectoryStore) -> None:
    run = store.create_run("pg", {"api_key": "sk-x", "workers": 3})
    episode = store.start_episode(
        "turn on wifi", device="10.0.0.5:5555", family="venus", model="m", run_id=run.id, meta={"k": [1, 2]}
    )
    step = StepRecord(
        index=0,
        action=Action.press(Key.HOME),
        action_source=ActionSource.HUMAN,
        started_at=datetime(2025, 1, 2, 3, 4, 5, 6, tzinfo=timezone.utc),
        screen=Size(720, 1600),
        foreground_app="com.android.launcher3",
        foreground_activity=".Launcher",
        raw_reply="reply",
        reasoning="why",
        thought="go home",
        guard_decisions=[{"guard": "safety", "decision": "ask", "token": "never-stored"}],
        timings=StepTimings(1.0, 2.0, 3.0, 4.0, 10.0),
        prompt_tokens=10,
        completion_tokens=2,
        model_latency_ms=2.5,
        error_kind="device_lost",
        error_text="gone",
        attempt=3,
    )
    recorded = store.record_step(episode.id, step, screenshot=jpeg(1), hierarchy="<h/>")
    store.finish_episode(episode.id, Outcome.BLOCKED, detail="payment screen", answer=None)

    [loaded] = store.steps(episode.id[:7])
    assert loaded == recorded
    assert loaded.guard_decisions == [{"guard": "safety", "decision": "ask"}]
    assert loaded.started_at == step.started_at and loaded.attempt == 3 and loaded.timings.total_ms == 10.0
    assert store.screenshot_path(loaded).read_bytes() == jpeg(1)
    assert loaded.screenshot_sha256 == hashlib.sha256(jpeg(1)).hexdigest()
    ended = store.episode(episode.id)
    assert ended.outcome == Outcome.BLOCKED and ended.step_count == 1 and ended.meta == {"k": [1, 2]}
    assert store.run(run.id).config == {"workers": 3}
    assert store.check_integrity() == []


def test_steps_are_committed_one_by_one(store: TrajectoryStore, pg_url: str, tmp_path: Path) -> None:
    episode = store.start_episode("t", device="d", family="f", model="m")
    with TrajectoryStore.open(pg_url, root=tmp_path / "shots") as other_host:
        for index in range(3):
            store.record_step(
                episode.id, StepRecord(index=index, action=Action.wait()), screenshot=jpeg(index)
            )
            assert len(other_host.steps(episode.id)) == index + 1
        assert other_host.mark_running_as(Outcome.INTERRUPTED, device="d") == [episode.id]
    assert store.episode(episode.id).status is EpisodeStatus.ENDED


def test_eight_threads_record_concurrently(store: TrajectoryStore) -> None:
    barrier = threading.Barrier(8)

    def worker(n: int) -> str:
        episode = store.start_episode(f"task {n}", device=f"phone-{n}", family="f", model="m")
        barrier.wait(timeout=30)
        for index in range(8):
            store.record_step(
                episode.id, StepRecord(index=index, action=Action.tap(n, index)), screenshot=jpeg(n)
            )
        store.finish_episode(episode.id, Outcome.FINISHED)
        return episode.id

    with ThreadPoolExecutor(8) as pool:
        ids = [f.result(timeout=120) for f in [pool.submit(worker, n) for n in range(8)]]
    assert all(store.episode(i).step_count == 8 for i in ids)
    assert len(store.list_episodes(outcome=Outcome.FINISHED, limit=None)) == 8
    assert store.check_integrity() == []


def test_device_upserts_race_between_hosts(store: TrajectoryStore, pg_url: str, tmp_path: Path) -> None:
    with TrajectoryStore.open(pg_url, root=tmp_path / "shots") as other_host:
        stores = [store, other_host]
        barrier = threading.Barrier(6)

        def seen(n: int) -> None:
            barrier.wait(timeout=30)
            stores[n % 2].upsert_device("SERIAL1", model=f"model-{n}")

        with ThreadPoolExecutor(6) as pool:
            for future in [pool.submit(seen, n) for n in range(6)]:
                future.result(timeout=60)
    [device] = store.devices()
    assert device.serial == "SERIAL1" and device.model and device.model.startswith("model-")


def test_prefix_lookup_and_corruption_found(store: TrajectoryStore) -> None:
    episode = store.start_episode("t", device="d", family="f", model="m")
    shot = store.record_step(episode.id, StepRecord(index=0), screenshot=jpeg(5))
    assert store.episode(episode.id[:5]).id == episode.id
    with pytest.raises(UserError):
        store.episode("zzz")
    path = store.screenshot_path(shot)
    data = bytearray(path.read_bytes())
    data[-5] ^= 0x55
    path.write_bytes(bytes(data))
    assert store.check_integrity() == [
        f"episode {episode.id} step 0: screenshot {shot.screenshot_path} does not match its sha256"
    ]
