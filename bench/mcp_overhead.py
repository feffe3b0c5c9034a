"""What a device tool call over MCP costs over the same action done by the runtime in-process.

    python bench/mcp_overhead.py [--calls 40]

Two simulated phones run in their own process (`mobile-agent sim up`, instant profile). The same taps (on the status
bar, a different point each time so that the loop guard never objects) are done two ways, in pairs (one in-process
on one phone, then one over MCP on the other), so that the load of a shared machine falls on both alike:

- in-process: the path every acting call of the server takes, without the protocol — the frame, the guards of
  `run` (validity, the safety gate, loops), the step recorded as an intent, the action, the step completed
  (mobile_agent.mcp.drive: ``Drive.step``, the frame, the guards and the action), timed and CPU-measured in this process;
- over MCP: `mobile-agent mcp` started over stdio as a desktop client starts it, ``tap`` called through the SDK's
  ClientSession; wall time per call at the client, and the server process's CPU per call (/proc/PID/stat).

Prints one JSON object: per call, the median wall time of each way and the median of the pairs' differences; the server's CPU per call
and the in-process CPU per call and their difference (the protocol's CPU: parsing, validation, the JSON answer,
the thread hop); the SDK client's CPU per call (this process); and the median of a bare MCP round trip (ping) on the
same connection. Goal: the difference is at
most one round trip, and a few milliseconds of CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import yaml
from mcp import ClientSession, StdioServerParameters, stdio_client, types

from mobile_agent.actions import Action
from mobile_agent.agent.runtime import load_registry
from mobile_agent.gate.policy import SafetyPolicy
from mobile_agent.mcp.drive import Drive
from mobile_agent.sim.farm import free_port, free_port_block
from mobile_agent.store.store import TrajectoryStore

CLI = [sys.executable, "-m", "mobile_agent.cli.app"]
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def server_pid(parent: int) -> int:
    """The `mobile-agent mcp` process the stdio client started (a child of this process)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and b"mcp" in cmdline:
            return int(entry.name)
    raise RuntimeError("the server process was not found")


def points(n: int, offset: int) -> list[tuple[int, int]]:
    return [(100 + ((i * 2 + offset) * 47) % 880, 30) for i in range(n)]


async def paired(
    env: dict, store: TrajectoryStore, adb: str, mine: str, theirs: str, calls: int, offset: int
) -> dict[str, list[float] | float]:
    """``calls`` pairs, each the same kind of tap done in-process on one phone, then over MCP on the other."""
    registry = load_registry(None)  # the shipped manifests, as the server's gate has them
    drive = Drive.open(store, mine, adb, registry=registry, policy=SafetyPolicy(), client="bench")
    params = StdioServerParameters(command="mobile-agent", args=["mcp"], env=env)
    out: dict[str, list[float] | float] = {"direct": [], "mcp": [], "pings": []}
    direct_cpu = client_cpu = 0.0
    try:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    pid = server_pid(os.getpid())
                    warm = await session.call_tool("tap", {"serial": theirs, "x": 40, "y": 30})
                    assert not warm.is_error, warm
                    drive.step(Action.tap(40, 30))
                    for _ in range(20):
                        t0 = time.perf_counter()
                        await session.send_ping()
                        out["pings"].append(time.perf_counter() - t0)
                    server0 = cpu_s(pid)
                    for x, y in points(calls, offset):
                        t0, c0 = time.perf_counter(), time.process_time()
                        drive.step(Action.tap(x, y))
                        t1, c1 = time.perf_counter(), time.process_time()
                        result = await session.call_tool("tap", {"serial": theirs, "x": x, "y": y})
                        t2, c2 = time.perf_counter(), time.process_time()
                        assert not result.is_error, [
                            c.text for c in result.content if isinstance(c, types.TextContent)
                        ]
                        out["direct"].append(t1 - t0)
                        out["mcp"].append(t2 - t1)
                        direct_cpu += c1 - c0
                        client_cpu += c2 - c1
                    out["server_cpu"] = cpu_s(pid) - server0
                    await session.call_tool("release_phone", {"serial": theirs})
    finally:
        drive.end("finished", "bench")
    out["direct_cpu"], out["client_cpu"] = direct_cpu, client_cpu
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=40, help="taps per way and round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    adb_port, base_port = free_port(), free_port_block(1)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    up = subprocess.Popen(
        [*CLI, "sim", "up", "--phones", "2", "--profile", "instant", "--adb-port", str(adb_port)]
        + ["--base-port", str(base_port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        mine, theirs = up.stdout.readline().strip(), up.stdout.readline().strip()
        adb = f"127.0.0.1:{adb_port}"
        rows: list[dict] = []
        with tempfile.TemporaryDirectory() as tmp:
            devices = Path(tmp) / "devices.yaml"
            listed = {"adb": adb, "discover": False, "devices": [{"serial": theirs}]}
            devices.write_text(yaml.safe_dump(listed))
            db = f"sqlite:///{Path(tmp) / 'bench.db'}"
            server_env = {
                **{k: v for k, v in os.environ.items() if k in ("HOME", "PATH", "MOBILE_AGENT_CACHE")},
                "MOBILE_AGENT_DB": db,
                "MOBILE_AGENT_DEVICES": str(devices),
                "MOBILE_AGENT_ADB": adb,
            }
            with TrajectoryStore.open(db) as store:
                for round_ in range(args.rounds):
                    rows.append(anyio.run(paired, server_env, store, adb, mine, theirs, args.calls, round_))
    finally:
        up.send_signal(signal.SIGINT)
        try:
            up.wait(timeout=20)
        except subprocess.TimeoutExpired:
            up.kill()
    n = args.calls * args.rounds
    ms = 1000.0
    direct = [t for row in rows for t in row["direct"]]
    mcp = [t for row in rows for t in row["mcp"]]
    pings = [t for row in rows for t in row["pings"]]
    server_cpu = sum(row["server_cpu"] for row in rows)
    direct_cpu = sum(row["direct_cpu"] for row in rows)
    out = {
        "calls_per_way": n,
        "in_process_wall_ms_median": round(statistics.median(direct) * ms, 2),
        "mcp_wall_ms_median": round(statistics.median(mcp) * ms, 2),
        "extra_wall_ms_median_of_pairs": round(
            statistics.median([b - a for a, b in zip(direct, mcp, strict=True)]) * ms, 2
        ),
        "mcp_ping_round_trip_ms_median": round(statistics.median(pings) * ms, 2),
        "in_process_cpu_ms_per_call": round(direct_cpu / n * ms, 2),
        "mcp_server_cpu_ms_per_call": round(server_cpu / n * ms, 2),
        "extra_cpu_ms_per_call": round((server_cpu - direct_cpu) / n * ms, 2),
        "mcp_client_cpu_ms_per_call": round(sum(row["client_cpu"] for row in rows) / n * ms, 2),
        "cpu_clock_resolution_ms": round(ms / TICKS, 1),
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
