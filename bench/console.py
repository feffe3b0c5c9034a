"""The web console at farm scale. Prints JSON.

    python bench/console.py [--episodes 10000] [--steps-per-episode 10] [--repeat 15] [--pg postgresql://...]

1. Page time: a store of ``--episodes`` episodes and ten times as many steps (built with bulk inserts, not through
   the agent: 20 runs, a queue task per episode, verdicts for a third of them, 20 questions waiting in the inbox,
   32 phones), in SQLite and (with --pg or MOBILE_AGENT_TEST_PG) in PostgreSQL in a private schema dropped
   afterwards. Each page (`/`, `/phones`, `/runs`, `/runs/ID`, `/runs/ID?page=5`, `/episodes/ID`, `/inbox`, a
   screenshot) is fetched ``--repeat`` times over HTTP from the console served by uvicorn; median and p95 per page.
   Goal: <= 200 ms median per page.
2. Step to screen: a step is recorded while an event stream is open (an SSE client) and while Chromium shows the
   episode's page (when /usr/bin/chromium and playwright are there); the time until each sees it. Goal: <= 1 s.
3. The live phone page (bench/console_live.py): frames a second in the browser, change-to-browser latency on a
   simulated phone, and what the console asks of the phone while nobody watches. Goal: >= 5 frames/s, <= 300 ms,
   nothing. ``--only live`` runs this part alone; ``--only pages`` the first two.
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import secrets
import statistics
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

from PIL import Image
from sqlalchemy import insert

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mobile_agent.actions import Action  # noqa: E402
from mobile_agent.console.app import BackgroundConsole  # noqa: E402
from mobile_agent.store.convert import now_utc  # noqa: E402
from mobile_agent.store.files import screenshot_name  # noqa: E402
from mobile_agent.store.judgments import JudgmentRow  # noqa: E402
from mobile_agent.store.pauses import PauseRow  # noqa: E402
from mobile_agent.store.phones import FarmDeviceRow  # noqa: E402
from mobile_agent.store.queue import QueueTaskRow  # noqa: E402
from mobile_agent.store.records import StepRecord  # noqa: E402
from mobile_agent.store.schema import EpisodeRow, RunRow, StepRow  # noqa: E402
from mobile_agent.store.store import TrajectoryStore  # noqa: E402

GOAL_PAGE_MS = 200.0
GOAL_STEP_S = 1.0
RUNS = 20
PHONES = 32
WAITING = 20
OUTCOMES = ["finished"] * 7 + ["blocked", "max_steps", "error:device_lost"]


def _jpeg() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (1080, 2400), (210, 225, 240)).save(out, "JPEG", quality=80)
    return out.getvalue()


def build(store: TrajectoryStore, episodes: int, per_episode: int) -> dict:
    """Bulk-insert runs, episodes, steps, queue tasks, verdicts, open pauses and phones; returns what to fetch."""
    now = now_utc()
    start = now - timedelta(hours=6)
    shot = _jpeg()
    runs = [
        {
            "id": f"{0xA0000000000 + i:012x}",
            "name": f"nightly-{i}",
            "created_at": start,
            "config": {},
            "status": "ended",
        }
        for i in range(RUNS)
    ]
    runs[-1]["status"] = "running"
    episode_rows, step_rows, task_rows, judgments, pause_rows = [], [], [], [], []
    shown_episode = None
    for n in range(episodes):
        run = runs[n % RUNS]["id"]
        eid = f"{0xE0000000000 + n:012x}"
        began = start + timedelta(seconds=n)
        waiting = n >= episodes - WAITING
        outcome = "needs_user" if waiting else OUTCOMES[n % len(OUTCOMES)]
        with_shots = waiting or n == 0
        shown_episode = shown_episode or eid
        episode_rows.append(
            {
                "id": eid,
                "run_id": run,
                "task": f"task {n} 在美团点一份黄焖鸡米饭",
                "app": ["美团", "微信", "支付宝", "设置"][n % 4],
                "device": f"phone-{n % PHONES}",
                "family": "ui-venus-2",
                "model": "ui-venus-2",
                "status": "ended",
                "outcome": outcome,
                "started_at": began,
                "ended_at": began + timedelta(seconds=30),
                "step_count": per_episode,
                "meta": {},
                "owner": None,
                "heartbeat_at": None,
            }
        )
        task_rows.append(
            {
                "run_id": run,
                "seq": n // RUNS,
                "label": f"tasks.yaml:{n}",
                "task": f"task {n}",
                "spec": {},
                "priority": 0,
                "requires_key": "",
                "state": "done",
                "attempts": 1,
                "device_failures": 0,
                "endpoint_failures": 0,
                "episode_id": eid,
                "outcome": outcome,
                "finished_at": began + timedelta(seconds=30),
            }
        )
        for i in range(per_episode):
            step_rows.append(
                {
                    "episode_id": eid,
                    "index": i,
                    "attempt": 1,
                    "started_at": began + timedelta(seconds=i),
                    "ended_at": began + timedelta(seconds=i, milliseconds=800),
                    "thought": f"step {i}: 点击搜索框，然后输入菜名",
                    "action": Action.tap(500, 100 + i).to_dict(),
                    "action_source": "model",
                    "guard_decisions": [{"guard": "safety", "verdict": "allow"}],
                    "screen_width": 1080,
                    "screen_height": 2400,
                    "foreground_app": "com.sankuai.meituan",
                    "total_ms": 800.0,
                    "status": "done",
                    "screenshot_path": f"{eid}/{screenshot_name(i)}" if with_shots else None,
                }
            )
            if with_shots:
                path = store.root / eid / screenshot_name(i)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(shot)
        if n % 3 == 0 and not waiting:
            judgments.append(
                {
                    "episode_id": eid,
                    "step_index": None,
                    "source": "check",
                    "judge": "checks",
                    "verdict": "complete" if outcome == "finished" else "failed",
                    "points": [],
                    "meta": {},
                    "created_at": now,
                }
            )
        if waiting:
            pause_rows.append(
                {
                    "episode_id": eid,
                    "step_index": per_episode - 1,
                    "kind": "confirm",
                    "question": "The agent is about to PAY in 美团.\n  action: tap(500, 924)\nAllow it? [y/N]",
                    "pending_action": Action.tap(500, 924).to_dict(),
                    "decision": {"kind": "pay", "app": "com.sankuai.meituan", "element": "确认支付"},
                    "device": f"phone-{n % PHONES}",
                    "context": {},
                    "status": "open",
                    "created_at": now,
                    "reserved_until": now + timedelta(minutes=5),
                }
            )
    phones = [
        {
            "key": f"127.0.0.1:5037/phone-{i}",
            "serial": f"phone-{i}",
            "adb_server": "127.0.0.1:5037",
            "consecutive_failures": 0,
            "updated_at": now,
            "quarantine_reason": "2 infrastructure failures in a row" if i == 3 else None,
        }
        for i in range(PHONES)
    ]
    t0 = time.perf_counter()
    with store.write_session() as session:
        for table, rows in (
            (RunRow, runs),
            (EpisodeRow, episode_rows),
            (QueueTaskRow, task_rows),
            (JudgmentRow, judgments),
            (PauseRow, pause_rows),
            (FarmDeviceRow, phones),
        ):
            for i in range(0, len(rows), 5000):
                session.execute(insert(table), rows[i : i + 5000])
    with store.write_session() as session:
        for i in range(0, len(step_rows), 10000):
            session.execute(insert(StepRow), step_rows[i : i + 10000])
    return {
        "build_s": round(time.perf_counter() - t0, 1),
        "episodes": len(episode_rows),
        "steps": len(step_rows),
        "run": runs[0]["id"],
        "episode": shown_episode,
    }


class Client:
    def __init__(self, console: BackgroundConsole) -> None:
        self.port = console.port
        response, _ = self.get(f"/?token={console.token}")
        self.cookie = response.getheader("set-cookie").split(";")[0]

    def get(self, path: str):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.request("GET", path, headers={"Cookie": getattr(self, "cookie", "")})
        response = conn.getresponse()
        body = response.read()
        conn.close()
        return response, body


def page_times(store: TrajectoryStore, built: dict, repeat: int) -> dict:
    pages = {
        "/": "/",
        "/phones": "/phones",
        "/runs": "/runs",
        "/runs/ID": f"/runs/{built['run']}",
        "/runs/ID?page=5": f"/runs/{built['run']}?page=5",
        "/episodes/ID": f"/episodes/{built['episode']}",
        "/inbox": "/inbox",
        "screenshot": f"/shots/{built['episode']}/0.jpg?w=360",
    }
    out = {}
    with BackgroundConsole(store) as console:
        client = Client(console)
        for name, path in pages.items():
            samples = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                response, body = client.get(path)
                samples.append((time.perf_counter() - t0) * 1000)
                assert response.status == 200, (path, response.status, body[:200])
            samples.sort()
            out[name] = {
                "median_ms": round(statistics.median(samples), 1),
                "p95_ms": round(samples[max(0, int(len(samples) * 0.95) - 1)], 1),
                "bytes": len(body),
            }
    worst = max(v["median_ms"] for v in out.values())
    return {
        "pages": out,
        "worst_median_ms": worst,
        "goal_ms": GOAL_PAGE_MS,
        "meets_goal": worst <= GOAL_PAGE_MS,
    }


def step_to_screen(store: TrajectoryStore, rounds: int = 10) -> dict:
    """Seconds from record_step returning to an SSE client reading `change`, and to Chromium showing the step."""
    episode = store.start_episode("watched", device="phone-x", family="f", model="m")
    index = 0
    sse: list[float] = []
    with BackgroundConsole(store) as console:
        client = Client(console)
        for _ in range(rounds):
            conn = http.client.HTTPConnection("127.0.0.1", console.port, timeout=30)
            conn.request("GET", "/events", headers={"Cookie": client.cookie})
            response = conn.getresponse()
            response.readline()  # retry:
            response.readline()
            seen: list[float] = []

            def read(response=response, seen=seen) -> None:
                while True:
                    line = response.readline()
                    if not line or line.startswith(b"event: change"):
                        seen.append(time.perf_counter())
                        return

            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            time.sleep(0.35)
            store.record_step(episode.id, StepRecord(index=index, thought="bench"))
            t0 = time.perf_counter()
            index += 1
            reader.join(10)
            conn.close()
            sse.append(seen[0] - t0 if seen else float("inf"))
        browser = _browser_latency(store, console, episode.id, index)
    out = {
        "sse_client_s": {"median": round(statistics.median(sse), 3), "max": round(max(sse), 3)},
        "browser_s": browser,
        "goal_s": GOAL_STEP_S,
    }
    worst = (
        max(sse) if not isinstance(browser, dict) or "max" not in browser else max(max(sse), browser["max"])
    )
    out["meets_goal"] = worst <= GOAL_STEP_S
    return out


def _browser_latency(store, console, episode_id: str, index: int, rounds: int = 5):
    chromium = Path("/usr/bin/chromium")
    if not chromium.is_file():
        return {"skipped": "no /usr/bin/chromium"}
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {"skipped": "playwright is not installed"}
    samples = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(chromium), args=["--headless", "--no-sandbox"]
        )
        try:
            page = browser.new_page()
            page.goto(console.url)
            page.goto(f"{console.base}/episodes/{episode_id}")
            page.wait_for_function("() => document.getElementById('live').className === 'ok'")
            for _ in range(rounds):
                page.wait_for_timeout(400)
                store.record_step(episode_id, StepRecord(index=index, thought="bench"))
                t0 = time.perf_counter()
                index += 1
                page.wait_for_function(
                    f"() => document.getElementById('step-count').textContent === '{index}'", timeout=10_000
                )
                samples.append(time.perf_counter() - t0)
        finally:
            browser.close()
    return {"median": round(statistics.median(samples), 3), "max": round(max(samples), 3)}


def measure(url: str | None, root: Path, args) -> dict:
    with TrajectoryStore.open(url, root=root) as store:
        built = build(store, args.episodes, args.steps_per_episode)
        result = {"data": built, **page_times(store, built, args.repeat)}
        result["step_to_screen"] = step_to_screen(store)
    return result


def postgres(url: str, root: Path, args) -> dict:
    import psycopg
    from sqlalchemy.engine import make_url

    dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    schema = f"mobile_agent_bench_{secrets.token_hex(4)}"
    try:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=3) as admin:
            admin.execute(f'CREATE SCHEMA "{schema}"')
    except psycopg.Error as exc:
        return {"skipped": f"no PostgreSQL at {make_url(url).render_as_string(hide_password=True)}: {exc}"}
    try:
        private = make_url(url).update_query_dict({"options": f"-csearch_path={schema}"})
        return measure(private.render_as_string(hide_password=False), root, args)
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--steps-per-episode", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument(
        "--pg", default=os.environ.get("MOBILE_AGENT_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
    )
    parser.add_argument("--skip-pg", action="store_true")
    parser.add_argument("--only", choices=["pages", "live"], default=None, help="run one part of the bench")
    parser.add_argument("--live-seconds", type=float, default=5.0)
    parser.add_argument("--live-rounds", type=int, default=10)
    parser.add_argument("--live-fps", type=float, default=8.0)
    args = parser.parse_args()
    out: dict = {}
    if args.only != "live":
        with tempfile.TemporaryDirectory(prefix="console-bench-") as tmp:
            work = Path(tmp)
            out["sqlite"] = measure(f"sqlite:///{work / 'bench.db'}", work / "sqlite", args)
            if not args.skip_pg:
                out["postgresql"] = postgres(args.pg, work / "pg", args)
    if args.only != "pages":
        from bench.console_live import live_view

        out["live"] = live_view(args.live_seconds, args.live_rounds, args.live_fps)
    print(json.dumps(out, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
