"""The console's live phone page on a simulated phone (called by bench/console.py --only live). Prints JSON.

    python bench/console.py --only live [--live-seconds 5] [--live-rounds 10] [--live-fps 8]

A simulated phone on a private adb server, the console in this process, the live page in headless Chromium:

- ``frames_per_s``: frames the page received per second over ``--live-seconds`` (goal >= 5);
- ``change_to_browser_ms``: the phone's screen changed on the phone itself (the simulator's launcher opens
  Settings, then home), until the page held the first frame showing it: the page's own arrival time (Date.now)
  minus the moment of the change (goal <= 300 ms); rounds start at random moments, so they fall anywhere between
  two frames;
- ``input_to_browser_ms``: a tap / home key sent from the page (fetch to /live/input, holding control) until the
  page held a changed frame;
- ``idle``: with nobody watching (before the first viewer, and after the last one left), the requests the phone
  got, the console's live threads and this process's CPU seconds over ``--live-seconds`` (goal: no requests, no
  live thread). The simulated phone runs in this process too, so ``cpu_s`` includes its idle cost.
"""

from __future__ import annotations

import os
import random
import statistics
import tempfile
import threading
import time
from pathlib import Path

GOAL_FPS = 5.0
GOAL_MS = 300.0
CHROMIUM = Path("/usr/bin/chromium")


def _idle(phone, seconds: float) -> dict:
    before_requests = sum(phone.requests.values())
    cpu = time.process_time()
    time.sleep(seconds)
    return {
        "seconds": seconds,
        "phone_requests": sum(phone.requests.values()) - before_requests,
        "live_threads": sum(1 for t in threading.enumerate() if t.name.startswith("live-")),
        "cpu_s": round(time.process_time() - cpu, 3),
    }


def _stats(samples: list[float]) -> dict:
    ordered = sorted(samples)
    return {
        "median": round(statistics.median(ordered), 1),
        "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1),
        "max": round(ordered[-1], 1),
        "n": len(ordered),
    }


LAST = "() => { const f = window.__liveFrames; return f.length ? f[f.length - 1][2] : null; }"
FIRST_CHANGED = """([t0, seen]) => { const f = window.__liveFrames.find(f => f[0] >= t0 && f[2] !== seen);
    return f ? f[0] - t0 : null; }"""


def _wait_changed(page, t0: float, seen) -> float:
    page.wait_for_function(FIRST_CHANGED, arg=[t0, seen], timeout=10_000, polling=20)
    return float(page.evaluate(FIRST_CHANGED, [t0, seen]))


def live_view(seconds: float = 5.0, rounds: int = 10, fps: float = 8.0) -> dict:
    if not CHROMIUM.is_file():
        return {"skipped": "no /usr/bin/chromium"}
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {"skipped": "playwright is not installed"}
    from mobile_agent.console.app import BackgroundConsole
    from mobile_agent.sim.farm import AdbServer, SimFarm, bundled_adb_path, free_port
    from mobile_agent.store import phones as phone_db
    from mobile_agent.store.store import TrajectoryStore

    port = free_port()
    os.environ["ADBUTILS_ADB_PATH"] = bundled_adb_path()
    os.environ["ANDROID_ADB_SERVER_PORT"] = str(port)  # nothing here touches another adb server
    server = AdbServer(port).ensure_running()
    out: dict = {"fps_limit": fps}
    try:
        with (
            tempfile.TemporaryDirectory(prefix="console-live-") as tmp,
            SimFarm(1, adb_port=port) as farm,
            TrajectoryStore.open(f"sqlite:///{Path(tmp) / 'live.db'}") as store,
            BackgroundConsole(store, live_fps=fps) as console,
            sync_playwright() as playwright,
        ):
            serial = farm.serials[0]
            phone = farm.phones[serial]
            adb = f"127.0.0.1:{port}"
            key = f"{adb}/{serial}"
            phone_db.record_device_result(store, key, serial, adb, ok=True)
            out["idle_before_any_viewer"] = _idle(phone, seconds)
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox"]
            )
            try:
                page = browser.new_page()
                page.goto(console.url)
                page.goto(f"{console.base}/live?phone={key}")
                page.wait_for_function("() => window.__liveFrames && window.__liveFrames.length >= 3")
                cpu = time.process_time()
                start = page.evaluate("() => Date.now()")
                page.wait_for_timeout(seconds * 1000)
                got = page.evaluate("(t) => window.__liveFrames.filter(f => f[0] >= t).length", start)
                out["frames_per_s"] = round(got / seconds, 2)
                out["cpu_s_per_s_one_viewer"] = round((time.process_time() - cpu) / seconds, 3)

                changes = []
                for i in range(rounds):
                    seen = page.evaluate(LAST)
                    t0 = time.time() * 1000
                    if i % 2 == 0:
                        phone.launch("com.android.settings")
                    else:
                        phone.key("home")
                    changes.append(_wait_changed(page, t0, seen))
                    page.wait_for_timeout(random.uniform(150, 400))  # no phase lock with the frames
                out["change_to_browser_ms"] = _stats(changes)

                page.locator("#take").click()
                page.wait_for_function(
                    "() => document.querySelector('#control-state').dataset.control === 'you'"
                )
                inputs = []
                for i in range(rounds):
                    seen = page.evaluate(LAST)
                    body = (
                        {"kind": "tap", "x": 0.875, "y": 0.273}
                        if i % 2 == 0
                        else {"kind": "key", "key": "home"}
                    )
                    t0 = page.evaluate(
                        """(body) => { const root = document.getElementById('live-phone'); const t0 = Date.now();
                        fetch('/live/input', {method: 'POST', headers: {'Content-Type': 'application/json',
                        'X-CSRF-Token': root.dataset.csrf}, body: JSON.stringify({...body, phone: root.dataset.phone,
                        viewer: root.dataset.viewer})}); return t0; }""",
                        body,
                    )
                    inputs.append(_wait_changed(page, t0, seen))
                    page.wait_for_timeout(random.uniform(150, 400))  # no phase lock with the frames
                out["input_to_browser_ms"] = _stats(inputs)
                page.locator("#release").click()
                page.close()
            finally:
                browser.close()
            time.sleep(1.0)  # the pump ends after its current frame
            out["idle_after_viewers_left"] = _idle(phone, seconds)
    finally:
        server.stop()
    idle = [out["idle_before_any_viewer"], out["idle_after_viewers_left"]]
    out["meets_goal"] = (
        out["frames_per_s"] >= GOAL_FPS
        and out["change_to_browser_ms"]["p95"] <= GOAL_MS
        and all(i["phone_requests"] == 0 and i["live_threads"] == 0 for i in idle)
    )
    out["goal"] = {
        "frames_per_s": f">= {GOAL_FPS}",
        "change_to_browser_ms_p95": f"<= {GOAL_MS}",
        "idle": "no frames",
    }
    return out


__all__ = ["live_view"]
