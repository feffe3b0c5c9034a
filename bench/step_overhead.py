"""What one step costs the runtime itself, what it sends to the model, and how long it takes next to the measured
floor.

    python bench/step_overhead.py [--episodes 8] [--rounds 3] [--starts 3]

The simulated phones and the simulated models run in separate processes (`mobile-agent sim up`, `mobile-agent sim
model`), so the CPU this process spends is the runtime's own. Prints one JSON object:

- cpu_ms_per_step: process CPU per recorded step, warm (in this process; instant phone, 0-latency model), median
  over --episodes of 6 steps. Goal <= 10 ms. The CPU the bench spends noting request sizes is left out.
- process_start_to_first_step_s: `mobile-agent run` started as a new process until its first step starts (the
  step's started_at in the store), with its bytecode compiled once as an installed package has it (goal <= 0.5 s)
  and with PYTHONDONTWRITEBYTECODE=1, compiling this package on every start (goal <= 0.85 s); where the time goes;
  and ``fresh_process_cpu_ms_per_step``: the CPU of each step of those new processes, median (goal <= 12 ms).
- bytes: bytes of the chat request per step vs the full-resolution PNG as base64 (what peers send); and, run
  with cheaper history frames (PromptOptions.history_image_scale / _quality, opt-in), their bytes and CPU.
- wall (`phone` profile; --rounds of ours at model 0 ms and 500 ms, the floor loop and a peer-style loop,
  interleaved on one phone): the floor is a minimal loop that performs the task's own actions, each step one u2
  JSON-RPC batch of action + wait for idle + screenshot, with no model, no recording and no view tree, and checks
  that the message went out. Ratios: median step and total per episode against the floor (goal <= 1.2 at 0 ms)
  and against the floor plus the model's time (goal <= 1.1 at 500 ms). Beside it, ``floor_with_tree``: the
  fastest loop that also reads each frame's view tree and focused window before acting (the action alone, then
  the frame beside the tree), which no loop with popup rules and a gate on the tree can go below.
- round_trips_per_step: requests the simulated phone answered per step (shell commands, sync sessions, u2 HTTP
  requests; a batch is one), counted on the phone's side (`sim-requests`), per step and per step kind, at each
  model latency. Goal: a mean <= 2.
- recheck: the gate's re-check of the screen right before acting (agent/recheck.py, issue 22): on which steps it
  read the phone again, how many requests that was (goal: at most one, only on the steps it marked), its wall
  time on those steps, and how old the judged view tree was when it began, at each model latency.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import contextmanager
from itertools import pairwise
from pathlib import Path

import adbutils

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
MODEL_MS = 500  # the second model latency the wall times are measured at


@contextmanager
def sim_processes(profile: str, latencies: tuple[int, ...] = (0,)):
    """One simulated phone (`sim up`) and one simulated model (`sim model`) per latency, each its own process;
    yields (serial, adb address, {latency ms: base URL})."""
    adb_port, base_port = free_port(), free_port_block(1)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    up = subprocess.Popen(
        [*CLI, "sim", "up", "--phones", "1", "--profile", profile, "--adb-port", str(adb_port)]
        + ["--base-port", str(base_port), "--scenario", "wechat_send"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    models, urls = [], {}
    for latency in latencies:
        port = free_port()
        models.append(
            subprocess.Popen(
                [*CLI, "sim", "model", "--port", str(port), "--family", FAMILY, "--latency-ms", str(latency)],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=env,
            )
        )
        urls[latency] = f"http://127.0.0.1:{port}/v1"
    try:
        serial = up.stdout.readline().strip()
        for model in models:
            model.stdout.readline()
        yield serial, f"127.0.0.1:{adb_port}", urls
    finally:
        for p in (*models, up):
            p.send_signal(signal.SIGINT)
        for p in (*models, up):
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


class RecheckMeter:
    """Times the loop's re-check before acting (agent/recheck.stale_step) and counts the view-tree reads it makes
    (AndroidDevice.hierarchy), per step kind; a step without a read cost nothing and is not listed."""

    def __init__(self) -> None:
        self.rows: list[
            tuple[str, int, float, float]
        ] = []  # (step kind, reads, ms, ms since the judged tree)
        self._reads = 0
        self._tree_in = 0.0  # when the last view tree of a frame came in (perf_counter)

    @contextmanager
    def installed(self):
        from mobile_agent.agent import loop
        from mobile_agent.device.android import AndroidDevice

        original_check, original_read = loop.stale_step, AndroidDevice.hierarchy
        original_screen = AndroidDevice._read_screen

        def hierarchy(device):
            self._reads += 1
            return original_read(device)

        def read_screen(device, *args, **kwargs):
            try:
                return original_screen(device, *args, **kwargs)
            finally:
                self._tree_in = time.perf_counter()

        def stale_step(device, seen, draft, after_s):
            reads, started = self._reads, time.perf_counter()
            try:
                return original_check(device, seen, draft, after_s)
            finally:
                if self._reads > reads:
                    kind = draft.action.kind.value if draft.action is not None else "none"
                    ms, since = (time.perf_counter() - started) * 1000, (started - self._tree_in) * 1000
                    self.rows.append((kind, self._reads - reads, ms, since))

        loop.stale_step, AndroidDevice.hierarchy = stale_step, hierarchy
        AndroidDevice._read_screen = read_screen
        try:
            yield self
        finally:
            loop.stale_step, AndroidDevice.hierarchy = original_check, original_read
            AndroidDevice._read_screen = original_screen

    def summary(self, episodes: int) -> dict:
        return {
            "rechecked_steps_per_episode": round(len(self.rows) / max(1, episodes), 2),
            "kinds": sorted({row[0] for row in self.rows}),
            "reads_per_rechecked_step_max": max((row[1] for row in self.rows), default=0),
            "wall_ms_median": _median([row[2] for row in self.rows]) if self.rows else 0.0,
            # How old the judged tree was when the re-check began: the window it closes, for its wall time.
            "judged_tree_age_ms_median": _median([row[3] for row in self.rows]) if self.rows else 0.0,
            "goal": "at most one extra request, only on the steps the gate marked",
        }


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
    import openai  # a peer's client (the runtime itself sends without the SDK)

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


def _script_turns() -> list[dict]:
    import yaml

    from mobile_agent.sim.servers.model_server import SHIPPED_SCRIPTS

    return yaml.safe_load((SHIPPED_SCRIPTS / "wechat_send.yaml").read_text(encoding="utf-8"))["turns"]


def run_floor(serial: str, adb: str, *, tree: bool = False) -> list[tuple[str, float]]:
    """The minimal loop for the task: each step is one u2 JSON-RPC batch of the action, the wait for idle and the
    frame after it (the first step also takes the first frame); no model, no recording, no view tree. Its actions
    are the simulated model's script for the task, in device pixels; it checks at the end (not timed) that the
    message was sent.

    With ``tree``, the fastest loop that also reads each frame's view tree and focused window before acting (what
    popup rules and a gate need): the action in a request of its own, then the idle wait with the frame beside the
    idle wait with the tree and focused window, both waited for (the first frame and tree side by side too)."""
    from concurrent.futures import ThreadPoolExecutor

    from mobile_agent.device import u2_server
    from mobile_agent.device.u2_calls import FOREGROUND_COMMAND, device_info, shell_call
    from mobile_agent.device.u2_rpc import Call, U2Channel

    host, port = adb.split(":")
    dev = adbutils.AdbClient(host=host, port=int(port)).device(serial)
    channel = U2Channel(lambda: dev.create_connection(adbutils.Network.TCP, u2_server.PORT))
    pool = ThreadPoolExecutor(max_workers=1)
    reset_phone(serial, adb)
    size = device_info(channel.call(Call("deviceInfo"), 10)).size
    scale = min(1.0, get_family(FAMILY).working_size(size).width / size.width)
    idle = Call("waitForIdle", (2000,))
    frame = [idle, Call("takeScreenshot", (scale, 80))]
    screen = [idle, Call("dumpWindowHierarchy", (False, 50)), shell_call(FOREGROUND_COMMAND)]

    def observe(calls: list[Call]) -> None:
        if not tree:
            channel.batch(calls + frame, 30, repeatable=False)
            return
        if calls:
            channel.batch(calls, 30, repeatable=False)
        read = pool.submit(channel.batch, screen, 30)
        channel.batch(frame, 30)
        assert read.result()[1].result, "no view tree"

    steps: list[tuple[str, float]] = []
    for i, turn in enumerate(_script_turns()):
        action = turn["action"]
        kind = action["kind"]
        started = time.perf_counter()
        if i == 0:
            observe([]) if tree else channel.call(Call("takeScreenshot", (scale, 80)), 10)
        if kind == "launch":
            calls = [Call("executeShellCommand", (f"monkey -p com.tencent.mm -c {LAUNCHER} 1", 20000))]
        elif kind == "tap":
            x, y = action["point"]
            calls = [Call("click", (round(x * size.width / 1000), round(y * size.height / 1000)))]
        elif kind == "type":
            calls = [Call("setClipboard", (None, action["text"])), Call("pasteClipboard")]
        else:  # finish: nothing to do on the phone
            calls = []
        if calls:
            observe(calls)
        steps.append((kind, (time.perf_counter() - started) * 1000))
    result = channel.call(Call("dumpWindowHierarchy", (False, 50)), 10).result or ""
    channel.close()
    pool.shutdown()
    assert 'text="晚上好"' in result, "the floor loop did not send the message"
    return steps


LAUNCHER = "android.intent.category.LAUNCHER"


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
    marked = [
        s.index for s in store.steps(result.episode_id) if any(d.get("recheck") for d in s.guard_decisions)
    ]
    reads = {i: c.get(RECHECK, 0) for i, (_, c) in enumerate(rows) if c.get(RECHECK)}
    recheck = {
        "steps_marked": marked,
        "extra_requests_by_step": reads,
        "only_on_marked_steps": set(reads) <= set(marked) and all(n <= 1 for n in reads.values()),
    }
    per_step = [sum(c.values()) for _, c in rows]
    by_kind: dict[str, list[int]] = {}
    for kind, counts in rows:
        by_kind.setdefault(kind, []).append(sum(counts.values()))
    return {
        "mean": round(statistics.mean(per_step), 2),
        "by_step": [{"kind": k, "requests": sum(c.values()), "what": c} for k, c in rows],
        "by_step_kind_mean": {k: round(statistics.mean(v), 2) for k, v in sorted(by_kind.items())},
        "goal_mean": 2,
        "recheck": recheck,
    }


RECHECK = (
    "u2 dumpWindowHierarchy"  # the re-check's one request (the step's own tree rides with the foreground)
)


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
    fresh_cpu: list[float] = []  # ms of process CPU per step, in these new processes
    uncached: list[float] = []
    marks_script = str(Path(__file__).with_name("startup_marks.py"))
    pycache = tempfile.TemporaryDirectory(prefix="bench-pycache-")

    # The uncached starts import this package from a copy without any __pycache__ (an editable install under
    # PYTHONDONTWRITEBYTECODE=1, whatever bytecode the checkout happens to hold); its dependencies keep the bytecode
    # their installer compiled.
    source = tempfile.TemporaryDirectory(prefix="bench-source-")
    package = Path(__import__("mobile_agent").__file__).parent
    shutil.copytree(package, Path(source.name) / "mobile_agent", ignore=shutil.ignore_patterns("__pycache__"))

    def env_for(tmp: str, cached: bool = True) -> dict[str, str]:
        # An installed package has its bytecode compiled: the cached starts read it from a private cache that one
        # unmeasured start fills. The uncached ones compile every module of this package on every start.
        env = dict(os.environ, MOBILE_AGENT_DATA=tmp)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        if cached:
            env["PYTHONPYCACHEPREFIX"] = pycache.name
        else:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [source.name, os.environ.get("PYTHONPATH")]))
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
            noted = json.loads(Path(env["STARTUP_MARKS"]).read_text())
            marks = {label: (t, cpu) for label, t, cpu in noted["marks"]}
            fresh_cpu += [(b[1] - a[1]) * 1000 for a, b in pairwise(noted["steps"])]
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
    source.cleanup()
    breakdown = {name: median(v) for name, v in phases.items()}
    breakdown["other"] = round(median(traced) - sum(breakdown.values()), 3)
    return {
        "median": median(plain),
        "runs": [round(x, 3) for x in plain],
        "goal": 0.5,
        "bytecode": "compiled once, as an installed package has it",
        "median_with_PYTHONDONTWRITEBYTECODE": median(uncached),
        "without_bytecode": "this package from a copy with no __pycache__, compiled on every start",
        "runs_with_PYTHONDONTWRITEBYTECODE": [round(x, 3) for x in uncached],
        "goal_with_PYTHONDONTWRITEBYTECODE": 0.85,
        "fresh_process_cpu_ms_per_step": {
            "median": round(statistics.median(fresh_cpu), 1),
            "steps": len(fresh_cpu),
            "each": [round(x, 1) for x in fresh_cpu],
            "goal": 12,
        },
        "traced_median": median(traced),
        "breakdown_wall_s": breakdown,
        "breakdown_cpu_s": {name: median(v) for name, v in phases_cpu.items()},
        "first_step_wall_s": median(first_step),
        "first_step_cpu_s": median(first_step_cpu),
        "to_first_step_end_s": median(first_done),
        "note": "wall times on a shared 2-core machine; CPU is the process's own (all threads)",
    }


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 1)


def wall_against_floor(
    ours: dict[int, list[list[tuple[str, float]]]],
    floor: list[list[tuple[str, float]]],
    floor_tree: list[list[tuple[str, float]]],
    ref: list[float],
) -> dict:
    """Per step and per episode, ours against the floor loop, at each model latency (the floor has no model: at
    latency L it is charged L per model call, one per step); and against the floor that also reads each frame's
    view tree before acting (``floor_with_tree``: what a loop with popup rules and a gate cannot go below)."""
    floors = {"floor": floor, "floor_with_tree": floor_tree}
    out: dict = {"profile": "phone"}
    medians = {}
    for name, episodes in floors.items():
        steps = [ms for episode in episodes for _, ms in episode]
        totals = [sum(ms for _, ms in episode) for episode in episodes]
        medians[name] = statistics.median(steps), statistics.median(totals)
        out[name] = {
            "median_step_ms": _median(steps),
            "total_per_episode_ms": _median(totals),
            "by_kind_median_ms": _by_kind(episodes),
            "episodes": len(episodes),
        }
    for latency, episodes in ours.items():
        steps = [ms for episode in episodes for _, ms in episode]
        totals = [sum(ms for _, ms in episode) for episode in episodes]
        calls = statistics.median(len(episode) for episode in episodes)  # one model request per step
        median = statistics.median(steps), statistics.median(totals)
        to_floor = _ratios(median, medians["floor"], latency, calls)
        to_tree = _ratios(median, medians["floor_with_tree"], latency, calls)

        out[f"model_{latency}_ms"] = {
            "median_step_ms": _median(steps),
            "total_per_episode_ms": _median(totals),
            "by_kind_median_ms": _by_kind(episodes),
            "median_step_ratio": to_floor[0],
            "total_ratio": to_floor[1],
            "against": "floor" if latency == 0 else f"floor + {latency} ms per model call",
            "goal": 1.2 if latency == 0 else 1.1,
            "median_step_ratio_to_floor_with_tree": to_tree[0],
            "total_ratio_to_floor_with_tree": to_tree[1],
            "episodes": len(episodes),
        }
    out["peer_style_loop_no_sleep_median_step_ms"] = _median(ref)
    out["ratio_to_peer_style_loop"] = round(
        statistics.median(ms for episode in ours[0] for _, ms in episode) / statistics.median(ref), 3
    )
    return out


def _ratios(
    ours: tuple[float, float], floor: tuple[float, float], latency: int, calls: float
) -> tuple[float, float]:
    """(median step, total) of ours over the floor's, the floor charged ``latency`` per model call."""
    return (
        round(ours[0] / (floor[0] + latency), 3),
        round(ours[1] / (floor[1] + calls * latency), 3),
    )


def _by_kind(episodes: list[list[tuple[str, float]]]) -> dict[str, float]:
    by_kind: dict[str, list[float]] = {}
    for episode in episodes:
        for kind, ms in episode:
            by_kind.setdefault(kind, []).append(ms)
    return {kind: _median(values) for kind, values in sorted(by_kind.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--episodes",
        type=int,
        default=8,
        help="instant-profile episodes for CPU and bytes (6 steps each: 48 steps for the median)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="phone-profile rounds of (ours at each latency, floor, peer loop)",
    )
    parser.add_argument("--starts", type=int, default=3, help="`mobile-agent run` processes to time")
    args = parser.parse_args()
    out: dict = {"task": TASK, "family": FAMILY, "screen": "1080x2400"}
    with tempfile.TemporaryDirectory() as tmp, TrajectoryStore.open(root=Path(tmp)) as store:
        with sim_processes("instant") as (serial, adb, urls):
            base_url = urls[0]
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
        latencies = (0, MODEL_MS)
        with sim_processes("phone", latencies) as (serial, adb, urls):
            ours: dict[int, list[list[tuple[str, float]]]] = {ms: [] for ms in latencies}
            floor: list[list[tuple[str, float]]] = []
            floor_tree: list[list[tuple[str, float]]] = []
            ref = []
            run_ours(serial, adb, urls[0], 1, store)  # starts the u2 server: not measured
            meters = {ms: RecheckMeter() for ms in latencies}
            for _ in range(args.rounds):  # interleaved: the machine's noise falls on all alike
                for ms in latencies:
                    with meters[ms].installed():
                        ours[ms].append(run_ours(serial, adb, urls[ms], 1, store)[1])
                floor.append(run_floor(serial, adb))
                floor_tree.append(run_floor(serial, adb, tree=True))
                ref += run_reference(serial, adb, urls[0], 12, sleep=0.0)
            out["round_trips_per_step"] = {
                f"model_{ms}_ms": count_round_trips(serial, adb, urls[ms], store) for ms in latencies
            }
        out["wall"] = wall_against_floor(ours, floor, floor_tree, ref)
        out["recheck"] = {f"model_{ms}_ms": meters[ms].summary(args.rounds) for ms in latencies}
        for ms in latencies:
            out["recheck"][f"model_{ms}_ms"]["requests_counted"] = out["round_trips_per_step"][
                f"model_{ms}_ms"
            ].pop("recheck")
    print(json.dumps(out, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
