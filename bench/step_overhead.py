"""What one step costs the runtime itself, what it sends to the model, and how long it takes next to the physical floor
and a peer-style loop.

    python bench/step_overhead.py [--episodes 8] [--rounds 3] [--starts 3]

The simulated phones and the simulated model run in separate processes (`mobile-agent sim up`, `mobile-agent sim
model`), so the CPU this process spends is the runtime's own. Prints one JSON object:

- cpu_ms_per_step: process CPU per recorded step (instant phone, 0-latency model), median. Goal <= 10 ms. The
  CPU the bench spends noting request sizes is left out.
- bytes: bytes of the chat request per step vs the full-resolution PNG as base64 (what peers send); and, run
  with cheaper history frames (PromptOptions.history_image_scale / _quality, opt-in), their bytes and CPU.
- wall (`phone` profile, episodes of ours and of the reference loop interleaved on the same phone):
  - floor: per step kind, what the profile makes unavoidable (the action, the screen change's animation, one
    screenshot); ours as a ratio of it. Goal <= 1.2x.
  - reference: a loop doing what peer runtimes do with their sleeps removed (screencap to a file + pull + full
    PNG to the model + `input`), per step. Goal: ours <= 0.9x of it.
- round_trips_per_step: requests the simulated phone answered per step (shell commands, sync sessions, u2 HTTP
  requests), counted on the phone's side (`sim-requests`), by kind. Goal <= 3.
- process_start_to_first_step_s: `mobile-agent run` started as a new process until its first step starts (the
  step's started_at in the store), with its bytecode compiled once as an installed package has it (and, for
  comparison, compiling every module on every start). Goal <= 0.5 s.
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
from mobile_agent.agent.config import AgentConfig
from mobile_agent.agent.runtime import run_task
from mobile_agent.gate.policy import parse_policy
from mobile_agent.model.base import PromptOptions
from mobile_agent.model.client import ModelClient
from mobile_agent.model.families import get_family
from mobile_agent.sim.farm import free_port, free_port_block
from mobile_agent.store.store import TrajectoryStore

TASK = "给张三发微信说晚上好"
FAMILY = "ui-venus-2"
# The cheaper history frames the bytes block prices (PromptOptions; `mobile-agent run --history-scale/-quality`).
CHEAPER_HISTORY = PromptOptions(history_image_scale=0.5, history_image_quality=60)
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
    """The real client; it only notes the size of each request body it sends, of its newest image and of its
    history images. The CPU this noting costs is kept in ``overhead_s`` and left out of the runtime's CPU."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.sent: list[int] = []
        self.current_image: list[int] = []
        self.history_images: list[int] = []
        self.overhead_s = 0.0

    def complete(self, messages, **kwargs):
        started = time.process_time()
        self.sent.append(len(json.dumps(messages, ensure_ascii=False).encode()))
        urls = [
            part["image_url"]["url"]
            for message in messages
            if isinstance(message.get("content"), list)
            for part in message["content"]
            if part.get("type") == "image_url"
        ]
        self.current_image.append(len(urls[-1]) if urls else 0)
        self.history_images.extend(len(url) for url in urls[:-1])
        self.overhead_s += time.process_time() - started
        return super().complete(messages, **kwargs)


def run_bench_task(serial: str, adb: str, base_url: str, store: TrajectoryStore, on_step, **options):
    """The bench's task in-process on the simulated phone (sending in WeChat allowed: it is the task)."""
    return run_task(
        TASK,
        device=serial,
        adb=adb,
        base_url=base_url,
        model=FAMILY,
        family=FAMILY,
        store=store,
        on_step=on_step,
        safety=parse_policy(allow=["send@com.tencent.mm"]),
        **options,
    )


def reset_phone(serial: str, adb: str) -> None:
    host, port = adb.split(":")
    dev = adbutils.AdbClient(host=host, port=int(port)).device(serial)
    dev.shell(["am", "force-stop", "com.tencent.mm"])
    dev.shell(["input", "keyevent", "3"])


def run_ours(
    serial: str,
    adb: str,
    base_url: str,
    episodes: int,
    store: TrajectoryStore,
    prompt: PromptOptions | None = None,
    measured: dict | None = None,
):
    """``episodes`` of the task (``prompt``: its history options); ``measured`` receives the client's notes."""
    cpu, wall, png_b64 = [], [], []
    client = MeasuringClient([base_url], FAMILY)
    sent, current_image = client.sent, client.current_image
    config = AgentConfig(prompt=prompt) if prompt is not None else None
    host, port = adb.split(":")
    dev = adbutils.AdbClient(host=host, port=int(port)).device(serial)
    with client:
        for _ in range(episodes):
            reset_phone(serial, adb)
            marks = [(time.process_time(), time.perf_counter(), client.overhead_s)]

            def on_step(event, marks=marks):
                now = (time.process_time(), time.perf_counter(), client.overhead_s)
                cpu.append((now[0] - marks[-1][0] - (now[2] - marks[-1][2])) * 1000)
                kind = event.action.kind.value if event.action is not None else "none"
                wall.append((kind, event.timings.get("total", (now[1] - marks[-1][1]) * 1000)))
                marks.append(now)

            result = run_bench_task(serial, adb, base_url, store, on_step, client=client, config=config)
            assert result.outcome == "finished", result
            # The full-resolution PNG a peer would send for the same screens.
            for step in store.steps(result.episode_id)[:2]:
                del step
                png = dev.shell(["screencap", "-p"], encoding=None)
                png_b64.append(len(base64.b64encode(png)))
    if measured is not None:
        measured["history_images"] = client.history_images
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

    result = run_bench_task(serial, adb, base_url, store, on_step)
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


# Where start-up goes, between the milestones bench/startup_marks.py notes (":done" marks the function's return).
START_PHASES = (
    ("interpreter", "spawn", "interpreter"),  # exec, Python, site
    ("import_cli", "interpreter", "cli_imported"),  # mobile_agent.cli.app and what it imports
    ("parse_arguments", "cli_imported", "run_command"),  # Typer: import cli/run.py, build and parse `run`
    ("imports_for_run", "run_command", "settings"),  # run_command's imports: agent, store, device, model
    ("settings", "settings", "settings:done"),
    ("store_open", "store_open", "store_open:done"),  # engine, tables, migrations
    ("choose_serial", "choose_serial", "choose_serial:done"),  # adb: the attached phones
    ("model_client", "model_client", "model_client:done"),
    ("registry", "registry", "registry:done"),  # app manifests, popup rules
    ("agent_init", "agent_init", "agent_init:done"),  # guards, safety gate
    ("phone_hold", "phone_hold", "phone_hold:done"),  # the phone's lease in the store
    ("start_episode", "start_episode", "start_episode:done"),
)


def _run_cli(
    serial: str, adb: str, base_url: str, command: list[str], env: dict[str, str]
) -> tuple[float, str]:
    """Spawn `mobile-agent run` (``command`` is how); (spawn time, store URL) once it has ended."""
    db = f"sqlite:///{env['MOBILE_AGENT_DATA']}/store.db"
    reset_phone(serial, adb)
    args = ["run", TASK, "--device", serial, "--adb", adb, "--base-url", base_url, "--model", FAMILY]
    args += ["--family", FAMILY, "--db", db, "--allow", "send@com.tencent.mm", "--non-interactive"]
    spawned = time.time()
    done = subprocess.run([*command, *args], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"mobile-agent run failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return spawned, db


def _first_step_started(db: str) -> float:
    with TrajectoryStore.open(db) as store:
        episode = store.list_episodes()[0]
        started = store.steps(episode.id)[0].started_at
    if started.tzinfo is None:
        started = started.replace(tzinfo=datetime.timezone.utc)
    return started.timestamp()


def process_start(serial: str, adb: str, base_url: str, starts: int) -> dict:
    """`mobile-agent run` as a new process: seconds from spawning it to the start of its first step (the step's
    started_at in the store), and where those seconds go.

    Each start is run twice, interleaved: as the user runs it (`python -m mobile_agent.cli.app run ...`, the
    headline) and under bench/startup_marks.py, which notes wall and CPU time at each milestone (the breakdown;
    its import hook adds well under a millisecond). The first step's own duration is reported too: work moved
    from before the first step into it (the model client's SDK import, now on a helper thread) shows up there."""
    plain, traced, phases, phases_cpu, first_step, first_step_cpu, first_done = [], [], {}, {}, [], [], []
    uncached: list[float] = []
    marks_script = str(Path(__file__).with_name("startup_marks.py"))
    pycache = tempfile.TemporaryDirectory(prefix="bench-pycache-")

    def env_for(tmp: str, cached: bool = True) -> dict[str, str]:
        # An installed package has its bytecode compiled: the cached starts read it from a private cache that one
        # unmeasured start fills. The uncached ones compile every module on every start (PYTHONDONTWRITEBYTECODE
        # with a cache nobody filled), as a sandbox that forbids writing bytecode does.
        env = dict(os.environ, MOBILE_AGENT_DATA=tmp)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        if cached:
            env["PYTHONPYCACHEPREFIX"] = pycache.name
        else:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            env.pop("PYTHONPYCACHEPREFIX", None)
        return env

    with tempfile.TemporaryDirectory() as tmp:
        _run_cli(serial, adb, base_url, CLI, env_for(tmp))  # fills the bytecode cache
    for _ in range(starts):
        with tempfile.TemporaryDirectory() as tmp:
            spawned, db = _run_cli(serial, adb, base_url, CLI, env_for(tmp))
            plain.append(_first_step_started(db) - spawned)
        with tempfile.TemporaryDirectory() as tmp:
            spawned, db = _run_cli(serial, adb, base_url, CLI, env_for(tmp, cached=False))
            uncached.append(_first_step_started(db) - spawned)
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(env_for(tmp), STARTUP_MARKS=f"{tmp}/marks.json")
            spawned, db = _run_cli(serial, adb, base_url, [sys.executable, marks_script], env)
            marks = {
                label: (t, cpu)
                for label, t, cpu in json.loads(Path(env["STARTUP_MARKS"]).read_text())["marks"]
            }
            marks["spawn"] = (spawned, 0.0)
            traced.append(_first_step_started(db) - spawned)
            for name, start, end in START_PHASES:
                if start in marks and end in marks:
                    phases.setdefault(name, []).append(marks[end][0] - marks[start][0])
                    phases_cpu.setdefault(name, []).append(marks[end][1] - marks[start][1])
            first_step.append(marks["first_step:done"][0] - marks["first_step"][0])
            first_step_cpu.append(marks["first_step:done"][1] - marks["first_step"][1])
            first_done.append(marks["first_step:done"][0] - spawned)

    def median(values: list[float]) -> float:
        return round(statistics.median(values), 3)

    pycache.cleanup()
    breakdown = {name: median(v) for name, v in phases.items()}
    breakdown["other"] = round(median(traced) - sum(breakdown.values()), 3)
    return {
        "median": median(plain),
        "runs": [round(x, 3) for x in plain],
        "goal": 0.5,
        "bytecode": "compiled once, as an installed package has it",
        "median_compiling_every_start": median(uncached),
        "traced_median": median(traced),
        "breakdown_wall_s": breakdown,
        "breakdown_cpu_s": {name: median(v) for name, v in phases_cpu.items()},
        "first_step_wall_s": median(first_step),
        "first_step_cpu_s": median(first_step_cpu),
        "to_first_step_end_s": median(first_done),
        "note": "wall times on a shared 2-core machine; CPU is the process's own (all threads)",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--episodes",
        type=int,
        default=8,
        help="instant-profile episodes for CPU and bytes (6 steps each: 48 steps for the median)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="phone-profile rounds of (ours, reference)")
    parser.add_argument("--starts", type=int, default=3, help="`mobile-agent run` processes to time")
    args = parser.parse_args()
    out: dict = {"task": TASK, "family": FAMILY, "screen": "1080x2400"}
    with tempfile.TemporaryDirectory() as tmp, TrajectoryStore.open(root=Path(tmp)) as store:
        with sim_processes("instant") as (serial, adb, base_url):
            default_notes: dict = {}
            cpu, _, sent, png_b64, current = run_ours(
                serial, adb, base_url, args.episodes, store, measured=default_notes
            )
            cheaper_notes: dict = {}
            cheaper_cpu, _, cheaper_sent, _, _ = run_ours(
                serial, adb, base_url, args.episodes, store, CHEAPER_HISTORY, cheaper_notes
            )
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
            "history_image_median": int(statistics.median(default_notes["history_images"])),
            "cheaper_history": {
                "options": {
                    "history_image_scale": CHEAPER_HISTORY.history_image_scale,
                    "history_image_quality": CHEAPER_HISTORY.history_image_quality,
                },
                "history_image_median": int(statistics.median(cheaper_notes["history_images"])),
                "history_image_ratio": round(
                    statistics.median(cheaper_notes["history_images"])
                    / statistics.median(default_notes["history_images"]),
                    3,
                ),
                "request_median": int(statistics.median(cheaper_sent)),
                "request_ratio_to_default": round(
                    statistics.median(cheaper_sent) / statistics.median(sent), 3
                ),
                "cpu_ms_per_step_median": round(statistics.median(cheaper_cpu), 1),
                "note": "opt-in; each family's default sends history frames as the model saw them",
            },
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
