"""Throughput of the simulated phone through a real adb server, and the CPU cost of idle phones. Prints JSON.

    python bench/sim_throughput.py [--seconds 3] [--idle-phones 16] [--threads 4]

- u2 screenshots/s and clicks/s on one phone (instant profile), one client thread, then `--threads` threads, through
  the adb client the runtime uses (device/adb_server.py: it asks the server's version once); the same through a
  plain ``adbutils.AdbClient`` for comparison (``plain_adbutils``: before every request it opens one more connection
  to ask the server's version, and closing that one sleeps 10 ms inside adbutils);
- CPU of `--idle-phones` connected phones doing nothing (u2 servers running), as a percentage of one core,
  measured with time.process_time() over a window (this process runs every simulated phone).
The adb server is a private one on a free port, started from the adbutils-bundled binary and killed at the end.
"""

from __future__ import annotations

import argparse
import json
import platform
import threading
import time

import adbutils
import uiautomator2

from mobile_agent.device.adb_server import AdbServerClient
from mobile_agent.sim.farm import SimFarm


def rate(action, seconds: float, threads: int = 1) -> float:
    """Calls per second of `action` over a window, from `threads` threads calling it in a loop."""
    counts = [0] * threads
    deadline = time.perf_counter() + seconds

    def loop(index: int) -> None:
        while time.perf_counter() < deadline:
            action()
            counts[index] += 1

    started = time.perf_counter()
    workers = [threading.Thread(target=loop, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return sum(counts) / (time.perf_counter() - started)


def one_phone(seconds: float, threads: int, client_class: type = AdbServerClient) -> dict[str, float]:
    with SimFarm(1, profile="instant") as farm:
        client = client_class(host="127.0.0.1", port=farm.adb_port)
        d = uiautomator2.connect(client.device(farm.serials[0]))
        d.app_start("com.tencent.mm")
        d.screenshot()
        d.click(10, 10)
        return {
            "u2_screenshots_per_s": round(rate(d.screenshot, seconds), 1),
            "u2_clicks_per_s": round(rate(lambda: d.click(540, 1200), seconds), 1),
            f"u2_screenshots_per_s_{threads}_threads": round(rate(d.screenshot, seconds, threads), 1),
            f"u2_clicks_per_s_{threads}_threads": round(
                rate(lambda: d.click(540, 1200), seconds, threads), 1
            ),
            "adb_shell_per_s": round(rate(lambda: d.adb_device.shell("echo x"), seconds), 1),
        }


def idle_cpu(phones: int, seconds: float) -> dict[str, float]:
    with SimFarm(phones, profile="instant") as farm:
        client = adbutils.AdbClient(host="127.0.0.1", port=farm.adb_port)
        # connect() pushes the jar and launches the u2 server, whose shell stream then stays open
        devices = [uiautomator2.connect(client.device(serial)) for serial in farm.serials]
        time.sleep(1.0)  # let start-up work settle
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        time.sleep(seconds)
        cpu = time.process_time() - cpu_start
        wall = time.perf_counter() - wall_start
        assert all(d.adb_device.serial for d in devices)
        return {"idle_phones": phones, "idle_cpu_percent_of_one_core": round(100 * cpu / wall, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="measurement window per figure")
    parser.add_argument("--idle-phones", type=int, default=16)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    result = {"python": platform.python_version(), "profile": "instant"}
    result.update(one_phone(args.seconds, args.threads))
    plain = one_phone(args.seconds, 1, adbutils.AdbClient)
    result["plain_adbutils"] = {k: v for k, v in plain.items() if not k.endswith("_threads")}
    result.update(idle_cpu(args.idle_phones, max(args.seconds, 5.0)))
    result["goals"] = {"u2_screenshots_per_s": 50, "u2_clicks_per_s": 200, "idle_cpu_percent_of_one_core": 5}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
