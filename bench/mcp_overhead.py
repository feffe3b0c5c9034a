"""What a device tool call over MCP costs over the same action done by the runtime in-process.

    python bench/mcp_overhead.py [--calls 40]

One simulated phone runs in its own process (`mobile-agent sim up`, instant profile). The same taps (on the status
bar, a different point each time so that the loop guard never objects) are done two ways, interleaved in rounds:

- in-process: the path every acting call of the server takes, without the protocol — the frame, the guards of
  `run` (validity, the safety gate, loops), the step recorded as an intent, the action, the step completed
  (mobile_agent.mcp.drive: ``Drive.step``, the frame, the guards and the action), timed and CPU-measured in this process;
- over MCP: `mobile-agent mcp` started over stdio as a desktop client starts it, ``tap`` called through the SDK's
  ClientSession; wall time per call at the client, and the server process's CPU per call (/proc/PID/stat).

Prints one JSON object: per call, the median wall time of each way and their difference; the server's CPU per call
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


def in_process(
    store: TrajectoryStore, serial: str, adb: str, taps: list[tuple[int, int]]
) -> tuple[list, float]:
    drive = Drive.open(store, serial, adb, registry=None, policy=SafetyPolicy(), client="bench")
    try:
        walls = []
        cpu0 = time.process_time()
        for x, y in taps:
            t0 = time.perf_counter()
            drive.step(Action.tap(x, y))
            walls.append(time.perf_counter() - t0)
        return walls, time.process_time() - cpu0
    finally:
        drive.end("finished", "bench")


async def over_mcp(env: dict, taps: list[tuple[int, int]], serial: str) -> tuple[list, float, list, float]:
    params = StdioServerParameters(command="mobile-agent", args=["mcp"], env=env)
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                pid = server_pid(os.getpid())
                warm = await session.call_tool("tap", {"serial": serial, "x": 40, "y": 30})
                assert not warm.is_error, warm
                pings = []
                for _ in range(20):
                    t0 = time.perf_counter()
                    await session.send_ping()
                    pings.append(time.perf_counter() - t0)
                walls = []
                cpu0, client0 = cpu_s(pid), time.process_time()
                for x, y in taps:
                    t0 = time.perf_counter()
                    result = await session.call_tool("tap", {"serial": serial, "x": x, "y": y})
                    walls.append(time.perf_counter() - t0)
                    assert not result.is_error, [
                        c.text for c in result.content if isinstance(c, types.TextContent)
                    ]
                cpu, client = cpu_s(pid) - cpu0, time.process_time() - client0
                await session.call_tool("release_phone", {"serial": serial})
                return walls, cpu, pings, client


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=40, help="taps per way and round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    adb_port, base_port = free_port(), free_port_block(1)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    up = subprocess.Popen(
        [*CLI, "sim", "up", "--phones", "1", "--profile", "instant", "--adb-port", str(adb_port)]
        + ["--base-port", str(base_port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        serial = up.stdout.readline().strip()
        adb = f"127.0.0.1:{adb_port}"
        with tempfile.TemporaryDirectory() as tmp:
            devices = Path(tmp) / "devices.yaml"
            devices.write_text(
                yaml.safe_dump({"adb": adb, "discover": False, "devices": [{"serial": serial}]})
            )
            db = f"sqlite:///{Path(tmp) / 'bench.db'}"
            server_env = {
                **{k: v for k, v in os.environ.items() if k in ("HOME", "PATH", "MOBILE_AGENT_CACHE")},
                "MOBILE_AGENT_DB": db,
                "MOBILE_AGENT_DEVICES": str(devices),
                "MOBILE_AGENT_ADB": adb,
            }
            direct_walls, direct_cpu, mcp_walls, mcp_cpu, pings, client_cpu = [], 0.0, [], 0.0, [], 0.0
            with TrajectoryStore.open(db) as store:
                for round_ in range(args.rounds):
                    walls, cpu = in_process(store, serial, adb, points(args.calls, round_))
                    direct_walls += walls
                    direct_cpu += cpu
                    walls, cpu, round_pings, client = anyio.run(
                        over_mcp, server_env, points(args.calls, round_ + 7), serial
                    )
                    mcp_walls += walls
                    mcp_cpu += cpu
                    pings += round_pings
                    client_cpu += client
    finally:
        up.send_signal(signal.SIGINT)
        try:
            up.wait(timeout=20)
        except subprocess.TimeoutExpired:
            up.kill()
    n = args.calls * args.rounds
    ms = 1000.0
    out = {
        "calls_per_way": n,
        "in_process_wall_ms_median": round(statistics.median(direct_walls) * ms, 2),
        "mcp_wall_ms_median": round(statistics.median(mcp_walls) * ms, 2),
        "extra_wall_ms_median": round(
            (statistics.median(mcp_walls) - statistics.median(direct_walls)) * ms, 2
        ),
        "mcp_ping_round_trip_ms_median": round(statistics.median(pings) * ms, 2),
        "in_process_cpu_ms_per_call": round(direct_cpu / n * ms, 2),
        "mcp_server_cpu_ms_per_call": round(mcp_cpu / n * ms, 2),
        "extra_cpu_ms_per_call": round((mcp_cpu - direct_cpu) / n * ms, 2),
        "mcp_client_cpu_ms_per_call": round(client_cpu / n * ms, 2),
        "cpu_clock_resolution_ms": round(ms / TICKS, 1),
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
