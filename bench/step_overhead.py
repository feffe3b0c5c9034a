"""What one step costs the runtime itself, what it sends to the model, and how long it takes next to a peer-style loop.

    python bench/step_overhead.py [--episodes 5] [--reference-steps 6]

The simulated phones and the simulated model run in separate processes (`mobile-agent sim up`, `mobile-agent sim
model`), so the CPU this process spends is the runtime's own: adbutils/uiautomator2 client work, image preparation,
the OpenAI client, guards, the store. Prints one JSON object:

- cpu_ms_per_step: median process CPU per recorded step (instant phone, 0-latency model). Goal <= 15 ms.
- bytes: median bytes of the chat request per step vs the full-resolution PNG as base64 (what peers send), measured
  on the simulated screens (photo-like content). Goal <= 20 %.
- wall: with the `phone` latency profile, the median wall time of a step of ours vs a reference loop that does what
  peer runtimes do (screencap to a file + pull + full PNG + fixed 1 s sleep), side by side on the same phone.
  Goal <= 50 %.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
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

    def complete(self, messages, *, episode_id=None):
        self.sent.append(len(json.dumps(messages, ensure_ascii=False).encode()))
        urls = [
            part["image_url"]["url"]
            for message in messages
            if isinstance(message.get("content"), list)
            for part in message["content"]
            if part.get("type") == "image_url"
        ]
        self.current_image.append(len(urls[-1]) if urls else 0)
        return super().complete(messages, episode_id=episode_id)


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
                wall.append((now[1] - marks[-1][1]) * 1000)
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


def run_reference(serial: str, adb: str, base_url: str, steps: int) -> list[float]:
    """What peers do each step: screencap to a file, pull it, send the full PNG, act by `input`, sleep 1 s."""
    host, port = adb.split(":")
    dev = adbutils.AdbClient(host=host, port=int(port)).device(serial)
    family = get_family(FAMILY)
    sdk = openai.OpenAI(base_url=base_url, api_key="EMPTY", max_retries=0)
    reset_phone(serial, adb)
    wall = []
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
                extra_headers={"X-Mobile-Agent-Episode": "reference"},
            )
            import io

            from PIL import Image

            size = Image.open(io.BytesIO(png)).size
            from mobile_agent.actions import Size

            action = family.parse(reply.choices[0].message.content or "", family.geometry(Size(*size))).action
            if action.kind is ActionKind.TAP:
                dev.shell(["input", "tap", str(action.point.x), str(action.point.y)])
            elif action.kind is ActionKind.LAUNCH:
                dev.shell(["monkey", "-p", "com.tencent.mm", "-c", "android.intent.category.LAUNCHER", "1"])
            elif action.kind is ActionKind.TYPE:
                dev.shell(["input", "text", "hello"])
            time.sleep(1.0)
            wall.append((time.perf_counter() - started) * 1000)
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--reference-steps", type=int, default=6)
    args = parser.parse_args()
    out: dict = {"task": TASK, "family": FAMILY, "screen": "1080x2400"}
    with tempfile.TemporaryDirectory() as tmp, TrajectoryStore.open(root=Path(tmp)) as store:
        with sim_processes("instant") as (serial, adb, base_url):
            cpu, _, sent, png_b64, current = run_ours(serial, adb, base_url, args.episodes, store)
        out["cpu_ms_per_step"] = {
            "median": round(statistics.median(cpu), 1),
            "p90": round(sorted(cpu)[int(len(cpu) * 0.9)], 1),
            "steps": len(cpu),
            "goal": 15,
        }
        png = statistics.median(png_b64)
        out["bytes"] = {
            "png_base64_median": int(png),
            "current_image_median": int(statistics.median(current)),
            "current_image_ratio": round(statistics.median(current) / png, 3),
            "request_median": int(statistics.median(sent)),
            "request_ratio": round(statistics.median(sent) / png, 3),
            "note": "the request also carries the last 2 screenshots of history (PromptOptions.history_images)",
            "goal": 0.20,
        }
        with sim_processes("phone") as (serial, adb, base_url):
            _, ours_wall, _, _, _ = run_ours(serial, adb, base_url, max(1, args.episodes // 2), store)
            ref_wall = run_reference(serial, adb, base_url, args.reference_steps)
        ratio = statistics.median(ours_wall) / statistics.median(ref_wall)
        out["wall"] = {
            "profile": "phone",
            "ours_median_ms": round(statistics.median(ours_wall)),
            "reference_median_ms": round(statistics.median(ref_wall)),
            "ratio": round(ratio, 3),
            "goal": 0.5,
        }
    print(json.dumps(out, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
