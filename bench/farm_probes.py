"""Where a farm run's time goes, for bench/farm_scaling.py: wall-clock timers around the queue and store calls the
workers make, and CPU seconds of every process of the simulated farm (this one, the `sim up` and `sim model`
children, the adb server) and of the whole machine (the other load on a shared machine)."""

from __future__ import annotations

import functools
import os
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

TICKS = os.sysconf("SC_CLK_TCK")


# ----- wall-clock timers -----------------------------------------------------------------------------------------
class Timers:
    """Milliseconds per call of wrapped functions, by name (list.append is atomic: no lock needed)."""

    def __init__(self) -> None:
        self.samples: dict[str, list[float]] = {}

    def wrap(self, name: str, func: Callable[..., Any]) -> Callable[..., Any]:
        samples = self.samples.setdefault(name, [])

        @functools.wraps(func)
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return func(*args, **kwargs)
            finally:
                samples.append((time.perf_counter() - started) * 1000)

        return timed

    def summary(self) -> dict[str, dict[str, float | int]]:
        out: dict[str, dict[str, float | int]] = {}
        for name, values in self.samples.items():
            if not values:
                continue
            ordered = sorted(values)
            out[name] = {
                "calls": len(ordered),
                "median_ms": round(statistics.median(ordered), 2),
                "p95_ms": round(ordered[max(0, int(len(ordered) * 0.95) - 1)], 2),
                "max_ms": round(ordered[-1], 2),
            }
        return out


@contextmanager
def timed_farm_calls(store: Any) -> Iterator[Timers]:
    """Time the queue calls of the pool (claim, finish, the pending look-up) and the store writes of the agent
    (episode start / end, one committed step) while the block runs; put everything back afterwards."""
    from mobile_agent.store import queue as q
    from mobile_agent.store import queue_status as qs

    timers = Timers()
    module_calls = [(q, "claim_task"), (q, "finish_task"), (qs, "pending_snapshot")]
    store_calls = ["start_episode", "record_step", "finish_episode"]
    saved = [(module, name, getattr(module, name)) for module, name in module_calls]
    try:
        for module, name, func in saved:
            setattr(module, name, timers.wrap(name, func))
        for name in store_calls:
            setattr(store, name, timers.wrap(name, getattr(store, name)))
        yield timers
    finally:
        for module, name, func in saved:
            setattr(module, name, func)
        for name in store_calls:
            store.__dict__.pop(name, None)


# ----- CPU -------------------------------------------------------------------------------------------------------
def process_cpu_s(pid: int) -> float:
    """utime + stime of a process (all its threads), from /proc (Linux); nan when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS
    except (OSError, IndexError, ValueError):
        return float("nan")


def thread_count(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Threads:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def machine_busy_s() -> float:
    """CPU seconds the whole machine spent busy (every core, every process) since boot."""
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / TICKS


def adb_server_pid(port: int) -> int | None:
    """The adb server process listening on ``port`` (it runs as `adb -L tcp:PORT fork-server server ...`)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"fork-server" in args and f"tcp:{port}".encode() in args:
            return int(entry.name)
    return None


class CpuMeter:
    """CPU seconds of named processes, and of the machine, between ``start()`` and ``stop()``."""

    def __init__(self, pids: dict[str, list[int]]) -> None:
        self.pids = pids
        self._start: dict[str, float] = {}
        self._machine = 0.0
        self._wall = 0.0
        self.peak_threads = 0
        self._sampling = threading.Event()
        self._sampler: threading.Thread | None = None

    def _read(self) -> dict[str, float]:
        return {role: sum(process_cpu_s(pid) for pid in pids) for role, pids in self.pids.items()}

    def _sample_threads(self) -> None:
        while not self._sampling.wait(0.25):
            runtime = self.pids.get("runtime", [os.getpid()])
            self.peak_threads = max(self.peak_threads, sum(thread_count(pid) for pid in runtime))

    def start(self) -> None:
        self._start, self._machine, self._wall = self._read(), machine_busy_s(), time.perf_counter()
        self._sampling.clear()
        self._sampler = threading.Thread(target=self._sample_threads, name="cpu-meter", daemon=True)
        self._sampler.start()

    def stop(self, steps: int) -> dict[str, Any]:
        wall = time.perf_counter() - self._wall
        machine = machine_busy_s() - self._machine
        self._sampling.set()
        if self._sampler is not None:
            self._sampler.join()
        used = {role: cpu - self._start[role] for role, cpu in self._read().items()}
        cores = os.cpu_count() or 1
        farm_total = sum(used.values())
        return {
            # Core-seconds per wall second: 1.0 is one core busy all the time.
            "cores_used": {
                **{role: round(cpu / wall, 3) for role, cpu in used.items()},
                "everything_else_on_the_machine": round(max(0.0, machine - farm_total) / wall, 3),
            },
            "cpu_s": {role: round(cpu, 2) for role, cpu in used.items()},
            "runtime_cpu_ms_per_step": round(used.get("runtime", 0.0) * 1000 / steps, 1) if steps else None,
            "machine_busy_share": round(machine / (wall * cores), 3),
            "runtime_peak_threads": self.peak_threads,
        }
