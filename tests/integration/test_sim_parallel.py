"""Sixteen simulated phones driven in parallel through one real adb server, 200 operations each."""

from __future__ import annotations

import random
import threading
import time

import adbutils
import pytest
import uiautomator2

PHONES = 16
OPERATIONS = 200


def drive(device: uiautomator2.Device, adb_device: adbutils.AdbDevice, seed: int) -> tuple[list[str], list]:
    """A fixed random mix of u2 and adb operations; returns the operations done and the points clicked."""
    rng = random.Random(seed)
    done: list[str] = []
    clicked: list[tuple[int, int]] = []

    def click() -> None:
        point = (rng.randrange(1080), rng.randrange(300, 2100))
        device.click(*point)
        clicked.append(point)

    operations = [
        ("click", 40, click),
        ("shell", 20, lambda: adb_device.shell("getprop ro.product.model") == "SimPhone" or _fail("getprop")),
        ("swipe", 10, lambda: device.swipe(540, 1800, 540, 900, 0.01)),
        ("current", 10, lambda: device.app_current()["package"] or _fail("app_current")),
        ("press", 10, lambda: device.press(rng.choice(["back", "home"]))),
        ("screenshot", 5, lambda: device.screenshot().size == (1080, 2400) or _fail("screenshot")),
        ("hierarchy", 5, lambda: "<hierarchy" in device.dump_hierarchy() or _fail("hierarchy")),
    ]
    names = [name for name, weight, _ in operations for _ in range(weight)]
    actions = {name: action for name, _, action in operations}
    device.app_start("com.tencent.mm")
    for _ in range(OPERATIONS):
        name = rng.choice(names)
        actions[name]()
        done.append(name)
    return done, clicked


def _fail(what: str) -> None:
    raise AssertionError(f"{what} returned an unexpected value")


@pytest.mark.slow
def test_sixteen_phones_in_parallel(sim_farm):
    farm = sim_farm(PHONES)
    client = adbutils.AdbClient(host="127.0.0.1", port=farm.adb_port)
    results: dict[str, tuple[list[str], list]] = {}
    errors: dict[str, BaseException] = {}

    def worker(index: int, serial: str) -> None:
        try:
            adb_device = client.device(serial)
            results[serial] = drive(uiautomator2.connect(adb_device), adb_device, seed=index)
        except BaseException as exc:
            errors[serial] = exc

    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(i, s)) for i, s in enumerate(farm.serials)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    elapsed = time.monotonic() - started
    assert not errors, errors
    assert sorted(results) == sorted(farm.serials)
    for serial, (ops, clicked) in results.items():
        assert len(ops) == OPERATIONS
        taps = [(e.detail["x"], e.detail["y"]) for e in farm.phones[serial].events if e.kind == "tap"]
        assert taps == clicked, serial  # every click reached its own phone, in order
    print(f"{PHONES} phones x {OPERATIONS} operations in {elapsed:.1f} s")
