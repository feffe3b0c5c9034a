"""What one step costs the runtime itself, what it sends to the model, and how long it takes next to the physical floor
and a peer-style loop.

    python bench/step_overhead.py [--episodes 4] [--rounds 3] [--starts 3]

The simulated phones and the simulated model run in separate processes (`mobile-agent sim up`, `mobile-agent sim
model`), so the CPU this process spends is the runtime's own. Prints one JSON object:

- cpu_ms_per_step: process CPU per recorded step (instant phone, 0-latency model), median. Goal <= 10 ms.
- bytes: bytes of the chat request per step vs the full-resolution PNG as base64 (what peers send).
- wall (`phone` profile, episodes of ours and of the reference loop interleaved on the same phone):
  - floor: per step kind, what the profile makes unavoidable (the action, the screen change's animation, one
    screenshot); ours as a ratio of it. Goal <= 1.2x.
  - reference: a loop doing what peer runtimes do with their sleeps removed (screencap to a file + pull + full
    PNG to the model + `input`), per step. Goal: ours <= 0.9x of it.
- round_trips_per_step: requests the simulated phone answered per step (shell commands, sync sessions, u2 HTTP
  requests), counted on the phone's side (`sim-requests`), by kind. Goal <= 3.
- process_start_to_first_step_s: `mobile-agent run` started as a new process until its first step starts (the
  step's started_at in the store). Goal <= 0.5 s.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import adbutils
import openai

from mobile_agent.actions import ActionKind
from mobile_agent.agent.runtime import run_task
from mobile_agent.agent.safety import parse_policy
from mobile_agent.model.client import ModelClient
from mobile_agent.model.families import get_family
from mobile_agent.sim.farm import free_port, free_port_block
from mobile_agent.store.store import TrajectoryStore

TASK = "给张三发微信说晚上好"
FAMILY = "ui-venus-2"
CLI = [sys.executable, "-m", "mobile_agent.cli.app"]


@contextmanager
def sim_processes(profile: str):
    adb_port, base_port, model_port = free_port(), free_port_block(1), free_port()
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    up = subprocess.Popen(
        [
            *CLI,
            "sim",
            "up",
            "--phones",
            "1",
            "--profile",
            profile,
            "--adb-port",
            str(adb_port),
            "--base-port",
            str(base_port),
            "--scenario",
            "wechat_send",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    model = subprocess.Popen(
        [*CLI, "sim", "model", "--port", str(model_port), "--family", FAMILY],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        serial = up.stdout.readline().strip()
        model.stdout.readline()
        yield serial, f"127.0.0.1:{adb_port}", f"http://127.0.0.1:{model_port}/v1"
    finally:
        for p in (model, up):
            p.send_signal(signal.SIGINT)
        for p in (model, up):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


class MeasuringClient(ModelClient):
    """The real client; it only notes the size of each request body it sends, and of its newest image."""

    sent: list[int]
    current_image: list[int]

    def complete(self, messages, **kwargs):
        self.sent.append(len(json.dumps(messages, ensure_ascii=False).encode()))
        urls = [
            part["image_url"]["url"]
            for message in messages
            if isinstance(message.get("content"), list)
            for part in message["content"]
            if part.get("type") == "image_url"
        ]
        self.current_image.append(len(urls[-1]) if urls else 0)
        return super().complete(messages, **kwargs)


def reset_phone(serial: str, adb: str) -> None:
    host, port = adb.split(":")
    dev = adbutils.AdbClient(host=host, port=int(port)).device(serial)
    dev.shell(["am", "force-stop", "com.tencent.mm"])
    dev.shell(["input", "keyevent", "3"])


def run_ours(serial: str, adb: str, base_url: str, episodes: int, store: TrajectoryStore):
    cpu, wall, sent, png_b64 = [], [], [], []
    client = MeasuringClient([base_url], FAMILY)
    client.sent = sent
    client.current_image = current_image = []
    host, port = adb.split(":")
    dev = adbutils.AdbClient(host=host, port=int(port)).device(serial)
    with client:
        for _ in range(episodes):
            reset_phone(serial, adb)
            marks = [(time.process_time(), time.perf_counter())]

            def on_step(event, marks=marks):
                now = (time.process_time(), time.perf_counter())
                cpu.append((now[0] - marks[-1][0]) * 1000)
                kind = event.action.kind.value if event.action is not None else "none"
                wall.append((kind, event.timings.get("total", (now[1] - marks[-1][1]) * 1000)))
                marks.append(now)

            result = run_task(
                TASK,
                device=serial,
                adb=adb,
                base_url=base_url,
                model=FAMILY,
                family=FAMILY,
                store=store,
                client=client,
                on_step=on_step,
                safety=parse_policy(allow=["send@com.tencent.mm"]),
            )
            assert result.outcome == "finished", result
            # The full-resolution PNG a peer would send for the same screens.
            for step in store.steps(result.episode_id)[:2]:
                del step
                png = dev.shell(["screencap", "-p"], encoding=None)
                png_b64.append(len(base64.b64encode(png)))
    return cpu, wall, sent, png_b64, current_image


def run_reference(serial: str, adb: str, base_url: str, steps: int, sleep: float = 1.0) -> list[float]:
    """What peers do each step: screencap to a file, pull it, send the full PNG, act by `input`, sleep (1 s in
    their defaults; 0 is the loop with its sleeps removed)."""
    host, port = adb.split(":")
    dev = adbutils.AdbClient(host=host, port=int(port)).device(serial)
    family = get_family(FAMILY)
    sdk = openai.OpenAI(base_url=base_url, api_key="EMPTY", max_retries=0)
    reset_phone(serial, adb)
    wall = []
    episode = f"reference-{uuid.uuid4().hex[:8]}"  # the simulated model keeps one script cursor per episode
    with tempfile.TemporaryDirectory() as tmp:
        local = Path(tmp) / "screen.png"
        for _ in range(steps):
            started = time.perf_counter()
            dev.shell(["screencap", "-p", "/sdcard/screen.png"])
            dev.sync.pull("/sdcard/screen.png", str(local))
            png = local.read_bytes()
            url = "data:image/png;base64," + base64.b64encode(png).decode()
            reply = sdk.chat.completions.create(
                model=FAMILY,
                messages=[
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": TASK},
                            {"type": "image_url", "image_url": {"url": url}},
                        ],
                    }
                ],
                extra_headers={"X-Mobile-Agent-Episode": episode},
            )
            import io

            from PIL import Image

            size = Image.open(io.BytesIO(png)).size
            from mobile_agent.actions import Size

            action = family.parse(reply.choices[0].message.content or "", family.geometry(Size(*size))).action
            if action.kind in (ActionKind.FINISH, ActionKind.ANSWER):
                wall.append((time.perf_counter() - started) * 1000)
                break
            if action.kind is ActionKind.TAP:
                dev.shell(["input", "tap", str(action.point.x), str(action.point.y)])
            elif action.kind is ActionKind.LAUNCH:
                dev.shell(["monkey", "-p", "com.tencent.mm", "-c", "android.intent.category.LAUNCHER", "1"])
            elif action.kind is ActionKind.TYPE:
                dev.shell(["input", "text", "hello"])
            if sleep:
                time.sleep(sleep)
            wall.append((time.perf_counter() - started) * 1000)
    return wall


def floors(profile) -> dict[str, float]:
    """Per step kind, in ms, what the phone makes unavoidable: the action itself, the animation of the screen change
    it causes, and one screenshot to see the result (a finish step only needs the screen it decided on)."""
    shot = profile.u2_screenshot
    return {
        kind: round(ms * 1000)
        for kind, ms in {
            "tap": profile.tap + profile.transition + shot,
            "type": profile.text + shot,
            "launch": profile.cold_start + profile.transition + shot,
            "key": profile.key + profile.transition + shot,
            "finish": shot,
        }.items()
    }


def count_round_trips(serial: str, adb: str, base_url: str, store: TrajectoryStore) -> dict:
    """One episode; after each step the phone's own request counts (the statistics command is not counted)."""
    host, port = adb.split(":")
    dev = adbutils.AdbClient(host=host, port=int(port)).device(serial)
    reset_phone(serial, adb)
    dev.shell("sim-requests reset")
    rows = []

    def on_step(event):
        counts = json.loads(dev.shell("sim-requests reset"))
        rows.append((event.action.kind.value if event.action else "none", counts))

    result = run_task(
        TASK,
        device=serial,
        adb=adb,
        base_url=base_url,
        model=FAMILY,
        family=FAMILY,
        store=store,
        on_step=on_step,
        safety=parse_policy(allow=["send@com.tencent.mm"]),
    )
    assert result.outcome == "finished", result
    per_step = [sum(c.values()) for _, c in rows]
    kinds: dict[str, int] = {}
    for _, counts in rows[1:]:  # the first step also connects to the u2 server
        for name, n in counts.items():
            kinds[name] = kinds.get(name, 0) + n
    return {
        "median": statistics.median(per_step[1:]),
        "first_step": per_step[0],
        "by_step": [{"kind": k, "requests": sum(c.values())} for k, c in rows],
        "by_kind_after_first": dict(sorted(kinds.items(), key=lambda kv: -kv[1])),
        "goal": 3,
    }


def process_start(serial: str, adb: str, base_url: str, starts: int) -> dict:
    """`mobile-agent run` as a new process: seconds from spawning it to the start of its first step."""
    out = []
    for _ in range(starts):
        reset_phone(serial, adb)
        with tempfile.TemporaryDirectory() as tmp:
            db = f"sqlite:///{tmp}/store.db"
            spawned = time.time()
            done = subprocess.run(
                [
                    *CLI,
                    "run",
                    TASK,
                    "--device",
                    serial,
                    "--adb",
                    adb,
                    "--base-url",
                    base_url,
                    "--model",
                    FAMILY,
                    "--family",
                    FAMILY,
                    "--db",
                    db,
                    "--allow",
                    "send@com.tencent.mm",
                    "--non-interactive",
                ],
                capture_output=True,
                text=True,
                env=dict(os.environ, MOBILE_AGENT_DATA=tmp),
            )
            if done.returncode != 0:
                raise SystemExit(f"mobile-agent run failed ({done.returncode}): {done.stderr.strip()[-500:]}")
            with TrajectoryStore.open(db) as store:
                episode = store.list_episodes()[0]
                first = store.steps(episode.id)[0]
            started = first.started_at
            if started.tzinfo is None:
                started = started.replace(tzinfo=datetime.timezone.utc)
            out.append(started.timestamp() - spawned)
    return {"median": round(statistics.median(out), 3), "runs": [round(x, 3) for x in out], "goal": 0.5}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=4, help="instant-profile episodes for CPU and bytes")
    parser.add_argument("--rounds", type=int, default=3, help="phone-profile rounds of (ours, reference)")
    parser.add_argument("--starts", type=int, default=3, help="`mobile-agent run` processes to time")
    args = parser.parse_args()
    out: dict = {"task": TASK, "family": FAMILY, "screen": "1080x2400"}
    with tempfile.TemporaryDirectory() as tmp, TrajectoryStore.open(root=Path(tmp)) as store:
        with sim_processes("instant") as (serial, adb, base_url):
            cpu, _, sent, png_b64, current = run_ours(serial, adb, base_url, args.episodes, store)
            out["process_start_to_first_step_s"] = process_start(serial, adb, base_url, args.starts)
        out["cpu_ms_per_step"] = {
            "median": round(statistics.median(cpu), 1),
            "p90": round(sorted(cpu)[int(len(cpu) * 0.9)], 1),
            "steps": len(cpu),
            "goal": 10,
        }
        png = statistics.median(png_b64)
        out["bytes"] = {
            "png_base64_median": int(png),
            "current_image_median": int(statistics.median(current)),
            "current_image_ratio": round(statistics.median(current) / png, 3),
            "request_median": int(statistics.median(sent)),
            "request_ratio": round(statistics.median(sent) / png, 3),
            "note": "the request also carries the last 2 screenshots of history (PromptOptions.history_images)",
        }
        from mobile_agent.sim.profiles import PROFILES

        floor = floors(PROFILES["phone"])
        with sim_processes("phone") as (serial, adb, base_url):
            ours, ref, ref_sleep = [], [], []
            for _ in range(args.rounds):  # interleaved: the machine's noise falls on both alike
                ours += run_ours(serial, adb, base_url, 1, store)[1]
                ref += run_reference(serial, adb, base_url, 12, sleep=0.0)
            ref_sleep = run_reference(serial, adb, base_url, 6, sleep=1.0)
            out["round_trips_per_step"] = count_round_trips(serial, adb, base_url, store)
        by_kind: dict[str, list[float]] = {}
        for kind, ms in ours:
            by_kind.setdefault(kind, []).append(ms)
        ratios = [ms / floor[kind] for kind, ms in ours if floor.get(kind)]
        ours_ms = [ms for _, ms in ours]
        out["wall"] = {
            "profile": "phone",
            "floor_ms": floor,
            "ours_by_kind_median_ms": {k: round(statistics.median(v)) for k, v in sorted(by_kind.items())},
            "ours_median_ms": round(statistics.median(ours_ms)),
            "floor_ratio_median": round(statistics.median(ratios), 3),
            "floor_ratio_total": round(sum(ours_ms) / sum(floor.get(k, 0) for k, _ in ours), 3),
            "floor_goal": 1.2,
            "reference_no_sleep_median_ms": round(statistics.median(ref)),
            "ratio_to_reference_no_sleep": round(statistics.median(ours_ms) / statistics.median(ref), 3),
            "reference_goal": 0.9,
            "reference_with_1s_sleep_median_ms": round(statistics.median(ref_sleep)),
            "steps": len(ours_ms),
        }
    print(json.dumps(out, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
