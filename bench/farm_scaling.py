"""Farm scaling and scheduler overhead. Prints JSON.

    python bench/farm_scaling.py [--phones 32] [--world-processes 4] [--latency-ms 1000] [--steps 3]
                                 [--skip-overhead] [--pg postgresql://...]

1. Throughput: episodes per second with N simulated phones (``phone`` latency profile) and the simulated model
   answering after ``--latency-ms``, against N x the throughput of one phone. The phones run in
   ``--world-processes`` `mobile-agent sim up` processes on one private adb server and the model in a
   `mobile-agent sim model` process (as they would on their own hardware), so that the only thing in this process,
   and what is measured, is the runtime: the worker pool, the agent loops and the store. Every phone first runs one
   warm-up episode (u2 start-up), which is not measured. ``where_time_goes`` breaks the measured run down (step
   timing medians; a phone's time in episodes, between them, before the first and after the last).
   Goal: scaling efficiency >= 0.90.
2. Scheduler overhead per claimed task: the queue's own cost (claim + finish, two short transactions) measured
   alone, single-threaded and with 8 threads contending, on SQLite and (with --pg or MOBILE_AGENT_TEST_PG) on
   PostgreSQL in a private schema that is dropped afterwards. Goal: <= 20 ms per task.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

SCRIPT = "task: bench drill\nturns:\n{turns}  - action: {{kind: finish, text: done}}\n"
GOAL_EFFICIENCY = 0.90
GOAL_OVERHEAD_MS = 20.0


# ----- the simulated world, in child processes -----------------------------------------------------------------
@dataclass
class World:
    """The simulated phones (``sim up`` processes sharing one private adb server) and the model (``sim model``)."""

    adb: str
    serials: list[str]
    base_url: str
    processes: list[subprocess.Popen]
    adb_server: object

    @property
    def pids(self) -> list[int]:
        return [proc.pid for proc in self.processes]

    def cpu_s(self) -> float:
        return sum(_child_cpu_s(pid) for pid in self.pids)

    def stop(self) -> None:
        for proc in self.processes:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in self.processes:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.adb_server.stop()


def _free_range(count: int) -> int:
    """A base port with ``count`` free loopback ports from it, away from 5555-5585 (which adb servers probe)."""
    from mobile_agent.sim.farm import free_port

    while True:
        base = free_port()
        if base + count > 65535 or (base <= 5585 and base + count >= 5555):
            continue
        socks = []
        try:
            for offset in range(count):
                sock = socket.socket()
                sock.bind(("127.0.0.1", base + offset))
                socks.append(sock)
            return base
        except OSError:
            continue
        finally:
            for sock in socks:
                sock.close()


def start_world(phones: int, processes: int, latency_ms: int, steps: int, workdir: Path) -> World:
    """``processes`` `mobile-agent sim up` children share the phones (each its own GIL, like phones on their own
    hardware), one `mobile-agent sim model` child answers; the runtime measured is the only thing in this process."""
    from mobile_agent.sim.farm import AdbServer, free_port

    scripts = workdir / "scripts"
    scripts.mkdir(parents=True, exist_ok=True)
    turns = "  - action: {kind: key, key: home}\n" * (steps - 1)
    (scripts / "bench.yaml").write_text(SCRIPT.format(turns=turns), encoding="utf-8")
    adb_server = AdbServer(free_port()).ensure_running()
    cli = [sys.executable, "-m", "mobile_agent.cli.app", "sim"]
    log_path = workdir / "world.log"
    log_file = log_path.open("a", encoding="utf-8")
    children: list[subprocess.Popen] = []
    world = World(f"127.0.0.1:{adb_server.port}", [], "", children, adb_server)
    try:
        model_port = free_port()
        children.append(
            subprocess.Popen(
                [
                    *cli,
                    "model",
                    "--port",
                    str(model_port),
                    "--latency-ms",
                    str(latency_ms),
                    "--scripts",
                    str(scripts),
                ],
                stdout=subprocess.PIPE,
                stderr=log_file,
                stdin=subprocess.DEVNULL,
                text=True,
            )
        )
        shares = [phones // processes + (1 if i < phones % processes else 0) for i in range(processes)]
        for share in (n for n in shares if n):
            children.append(
                subprocess.Popen(
                    [
                        *cli,
                        "up",
                        "--phones",
                        str(share),
                        "--profile",
                        "phone",
                        "--adb-port",
                        str(adb_server.port),
                        "--base-port",
                        str(_free_range(share)),
                    ],
                    stdout=subprocess.PIPE,
                    stderr=log_file,
                    stdin=subprocess.DEVNULL,
                    text=True,
                )
            )
        if "http://" not in children[0].stdout.readline():
            raise SystemExit(f"the simulated model did not start: {log_path.read_text()[-2000:]}")
        world.base_url = f"http://127.0.0.1:{model_port}/v1"
        for proc, share in zip(children[1:], (n for n in shares if n), strict=True):
            serials = [proc.stdout.readline().strip() for _ in range(share)]
            if not all(serials):
                raise SystemExit(f"the simulated phones did not start: {log_path.read_text()[-2000:]}")
            world.serials.extend(serials)
    except BaseException:
        world.stop()
        raise
    return world


def _child_cpu_s(pid: int) -> float:
    """utime + stime of a process, from /proc (Linux)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def run_batch(world: World, serials: list[str], tasks: int, workdir: Path, label: str) -> dict:
    """Warm each phone up with one episode, then time ``tasks`` episodes. Returns throughput figures."""
    from mobile_agent.farm.inventory import FarmPhone, PhoneEntry, PhoneState
    from mobile_agent.farm.scheduler.jobs import SchedulerConfig
    from mobile_agent.farm.scheduler.pool import WorkerPool
    from mobile_agent.farm.scheduler.runner import AgentRunner, EpisodeDefaults, ModelSettings
    from mobile_agent.farm.tasks import ResetMode
    from mobile_agent.store import queue as q
    from mobile_agent.store import queue_status as qs
    from mobile_agent.store.store import TrajectoryStore

    phones = [FarmPhone(PhoneEntry(serial=s, adb=world.adb), PhoneState.ONLINE) for s in serials]
    with TrajectoryStore.open(root=workdir / label) as store:
        runner = AgentRunner(
            store,
            ModelSettings((world.base_url,), "ui-venus-2", per_endpoint_in_flight=len(serials)),
            defaults=EpisodeDefaults(max_steps=10, timeout_s=120, reset=ResetMode.NONE),
        )
        config = SchedulerConfig(poll_s=0.05, heartbeat_s=5)
        figures = {}
        for phase, count in (("warm-up", len(serials)), ("measured", tasks)):
            run = store.create_run(f"{label} {phase}")
            q.enqueue_tasks(store, run.id, [q.NewTask(i, f"t{i}", f"bench drill #{i}") for i in range(count)])
            pool = WorkerPool(store, phones, runner, config=config, run_ids=[run.id])
            started, cpu_here, cpu_world = time.perf_counter(), time.process_time(), world.cpu_s()
            wall_start = time.time()
            pool.run()
            elapsed = time.perf_counter() - started
            cpu_runtime, cpu_sim = time.process_time() - cpu_here, world.cpu_s() - cpu_world
            counts = qs.run_counts(store, run.id)
            outcomes = {t.outcome for t in qs.list_tasks(store, run.id)}
            figures[phase] = {
                "episodes": counts.done,
                "seconds": round(elapsed, 2),
                "outcomes": sorted(outcomes),
                # CPU seconds of the runtime and of the simulated world (phones, model; not the adb server) over
                # wall seconds x cores: near 1.0 means the machine, not the scheduler, is the limit.
                "cpu_utilisation": round((cpu_runtime + cpu_sim) / (elapsed * (os.cpu_count() or 1)), 3),
                "cpu_s": {"runtime": round(cpu_runtime, 2), "simulated_world": round(cpu_sim, 2)},
            }
            if phase == "measured":
                figures[phase]["where_time_goes"] = where_time_goes(store, run.id, wall_start, elapsed)
        runner.close()
    measured = figures["measured"]
    measured["episodes_per_s"] = round(measured["episodes"] / measured["seconds"], 4)
    return figures


def where_time_goes(store, run_id: str, started: float, elapsed: float) -> dict:
    """Medians of the recorded step timings, and where a phone's wall time went: in episodes, between them (claim,
    reset, episode start), before its first and after its last episode (start-up and the tail of the run)."""
    episodes = store.list_episodes(run_id=run_id, limit=None)
    steps = [step for e in episodes for step in store.steps(e.id)]

    def median(values) -> float | None:
        values = [v for v in values if v is not None]
        return round(statistics.median(values), 1) if values else None

    timing = {
        name: median(getattr(step.timings, name) for step in steps)
        for name in ("screenshot_ms", "model_ms", "act_ms", "settle_ms", "total_ms")
    }
    timing["model_latency_ms"] = median(step.model_latency_ms for step in steps)
    per_phone: dict[str, list] = {}
    for e in episodes:
        per_phone.setdefault(e.device, []).append(e)
    busy, gaps, heads, tails, counts = [], [], [], [], []
    for phone_episodes in per_phone.values():
        phone_episodes.sort(key=lambda e: e.started_at)
        counts.append(len(phone_episodes))
        busy.append(sum((e.ended_at - e.started_at).total_seconds() for e in phone_episodes))
        heads.append(phone_episodes[0].started_at.timestamp() - started)
        tails.append(started + elapsed - phone_episodes[-1].ended_at.timestamp())
        gaps.extend((b.started_at - a.ended_at).total_seconds() for a, b in pairwise(phone_episodes))
    episode_s = [(e.ended_at - e.started_at).total_seconds() for e in episodes]
    in_steps = {e.id: sum(s.timings.total_ms or 0 for s in store.steps(e.id)) / 1000 for e in episodes}
    return {
        "step_ms_median": timing,
        "episode_s_median": median(episode_s),
        "episode_s_max": round(max(episode_s), 2),
        "episode_outside_steps_ms_median": median(
            ((e.ended_at - e.started_at).total_seconds() - in_steps[e.id]) * 1000 for e in episodes
        ),
        "episodes_per_phone": dict(sorted(Counter(counts).items())),
        "phone_busy_share": round(sum(busy) / (elapsed * len(per_phone)), 3),
        "between_episodes_ms_median": median(g * 1000 for g in gaps),
        "first_episode_start_s": {"median": median(heads), "max": round(max(heads), 2)},
        "after_last_episode_s": {"median": median(tails), "min": round(min(tails), 2)},
    }


# ----- queue overhead -----------------------------------------------------------------------------------------
def _claim_loop(store, run_id: str, name: str, samples: list[float], lock: threading.Lock) -> None:
    """Claim and finish tasks until none is left; the milliseconds of each claim + finish go to ``samples``."""
    from mobile_agent.store import queue as q

    mine: list[float] = []
    while True:
        t0 = time.perf_counter()
        claim = q.claim_task(store, worker=name, device=name, tags=set(), run_ids=[run_id])
        if claim is None:
            break
        q.finish_task(store, claim, episode_id=None, outcome="finished")
        mine.append((time.perf_counter() - t0) * 1000)
    with lock:
        samples.extend(mine)


def queue_overhead(url: str | None, root: Path, *, tasks: int = 400, threads: int = 8) -> dict:
    from mobile_agent.store import queue as q
    from mobile_agent.store.store import TrajectoryStore

    out = {}
    with TrajectoryStore.open(url, root=root) as store:
        for mode, n_threads in (("single", 1), (f"{threads}_threads", threads)):
            run = store.create_run(f"overhead {mode}")
            q.enqueue_tasks(store, run.id, [q.NewTask(i, f"t{i}", f"task {i}") for i in range(tasks)])
            samples: list[float] = []
            lock = threading.Lock()

            started = time.perf_counter()
            pool = [
                threading.Thread(target=_claim_loop, args=(store, run.id, f"w{i}", samples, lock))
                for i in range(n_threads)
            ]
            for t in pool:
                t.start()
            for t in pool:
                t.join()
            wall = time.perf_counter() - started
            samples.sort()
            out[mode] = {
                "tasks": len(samples),
                "claim_plus_finish_ms_mean": round(statistics.mean(samples), 2),
                "claim_plus_finish_ms_p95": round(samples[int(len(samples) * 0.95) - 1], 2),
                "wall_ms_per_task": round(wall * 1000 / len(samples), 2),
            }
    return out


def pg_overhead(url: str, root: Path) -> dict:
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
        return queue_overhead(private.render_as_string(hide_password=False), root)
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


# ----- main ----------------------------------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phones", type=int, default=32)
    parser.add_argument("--latency-ms", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=3, help="steps per episode")
    parser.add_argument("--single-tasks", type=int, default=4, help="episodes timed on one phone")
    parser.add_argument("--per-phone", type=int, default=2, help="episodes per phone in the farm run")
    parser.add_argument(
        "--pg", default=os.environ.get("MOBILE_AGENT_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
    )
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--skip-overhead", action="store_true", help="skip the queue overhead measurement")
    parser.add_argument(
        "--world-processes", type=int, default=4, help="`sim up` processes the phones are spread over"
    )
    args = parser.parse_args()

    import logging

    logging.basicConfig(level=logging.ERROR)
    result: dict = {"machine_cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if not args.skip_throughput:
            world = start_world(args.phones, args.world_processes, args.latency_ms, args.steps, workdir)
            try:
                single = run_batch(world, world.serials[:1], args.single_tasks, workdir, "single")
                farm = run_batch(world, world.serials, args.phones * args.per_phone, workdir, "farm")
            finally:
                world.stop()
            one = single["measured"]["episodes_per_s"]
            many = farm["measured"]["episodes_per_s"]
            efficiency = many / (args.phones * one)
            result["throughput"] = {
                "profile": "phone",
                "model_latency_ms": args.latency_ms,
                "steps_per_episode": args.steps,
                "phones": args.phones,
                "world_processes": args.world_processes,
                "single_phone": single,
                "farm": farm,
                "scaling_efficiency": round(efficiency, 3),
                "goal": GOAL_EFFICIENCY,
                "meets_goal": efficiency >= GOAL_EFFICIENCY,
            }
        if args.skip_overhead:
            print(json.dumps(result, indent=2))
            return
        overhead = {
            "sqlite": queue_overhead(None, workdir / "sqlite"),
            "postgresql": pg_overhead(args.pg, workdir / "pg"),
        }
        # The overhead a task pays: one uncontended claim + finish, and the database time per task when many
        # workers hammer the queue with zero-length episodes (the contended latency is mostly waiting in line).
        figures = [
            value
            for backend in overhead.values()
            for mode in backend.values()
            if isinstance(mode, dict)
            for value in (
                mode["claim_plus_finish_ms_mean"]
                if mode is backend.get("single")
                else mode["wall_ms_per_task"],
            )
        ]
        result["scheduler_overhead"] = {
            **overhead,
            "goal_ms": GOAL_OVERHEAD_MS,
            "judged_on": "single-thread claim+finish mean, and wall ms per task with 8 contending threads",
            "meets_goal": bool(figures) and max(figures) <= GOAL_OVERHEAD_MS,
        }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
