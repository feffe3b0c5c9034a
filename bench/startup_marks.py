"""Run `mobile-agent ARGS...` in this process and note when start-up reaches each milestone (bench only).

    STARTUP_MARKS=/tmp/marks.json python bench/startup_marks.py run "task" --device ... --non-interactive

Writes {"marks": [[label, unix_time, process_cpu_s], ...], "steps": [[unix_time, process_cpu_s], ...]} to
$STARTUP_MARKS when the process exits (``steps``: at the start of every step, and once at the episode's end). The milestones are found by
wrapping functions as their modules finish loading (an import hook), so nothing is imported earlier than the CLI
itself would import it. Entries are marked on the way in, "...:done" on the way out.
"""

from __future__ import annotations

import time

BOOTED = time.time(), time.process_time()  # the interpreter and site are up; the rest costs microseconds

import atexit  # noqa: E402
import functools  # noqa: E402
import importlib.abc  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

MARKS: list[tuple[str, float, float]] = [("interpreter", *BOOTED)]
STEPS: list[tuple[float, float]] = []  # every step's start (the CPU per step of a fresh process)

# module -> (attribute path, label, mark the return too); a label is noted the first time only
WRAP: dict[str, list[tuple[str, str, bool]]] = {
    "mobile_agent.cli.run": [("run_command", "run_command", False)],
    "mobile_agent.settings.values": [("load_settings", "settings", True)],
    "mobile_agent.device.android": [
        ("choose_serial", "choose_serial", True),
        ("AndroidDevice.__init__", "device_init", True),
    ],
    "mobile_agent.model.client": [("ModelClient.__init__", "model_client", True)],
    "mobile_agent.store.store": [
        ("TrajectoryStore.open", "store_open", True),
        ("TrajectoryStore.start_episode", "start_episode", True),
    ],
    "mobile_agent.agent.runtime": [("load_registry", "registry", True)],
    "mobile_agent.agent.loop": [
        ("Agent.__init__", "agent_init", True),
        ("Agent._step", "first_step", True),
        ("Agent._finish", "finish", False),
    ],
    "mobile_agent.agent.phone_hold": [("PhoneHold.__enter__", "phone_hold", True)],
}
CLASS_METHODS = {"TrajectoryStore.open"}


def mark(label: str) -> None:
    if all(seen != label for seen, *_ in MARKS):
        MARKS.append((label, time.time(), time.process_time()))


def wrapped(function, label: str, on_return: bool):
    @functools.wraps(function)
    def call(*args, **kwargs):
        if label == "first_step":
            STEPS.append((time.time(), time.process_time()))
        elif label == "finish":
            STEPS.append((time.time(), time.process_time()))
        mark(label)
        try:
            return function(*args, **kwargs)
        finally:
            if on_return:
                mark(f"{label}:done")

    return call


def instrument(module) -> None:
    for path, label, on_return in WRAP[module.__name__]:
        owner_name, _, name = path.rpartition(".")
        owner = getattr(module, owner_name) if owner_name else module
        if path in CLASS_METHODS:
            setattr(owner, name, classmethod(wrapped(getattr(owner, name).__func__, label, on_return)))
        else:
            setattr(owner, name, wrapped(getattr(owner, name), label, on_return))


class Milestones(importlib.abc.MetaPathFinder):
    """Finds nothing itself; for the modules in WRAP it wraps the real loader so the functions are wrapped the
    moment the module has run, before any importer reads them."""

    def find_spec(self, name, path, target=None):
        if name not in WRAP:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                run = spec.loader.exec_module

                def exec_module(module, run=run):
                    run(module)
                    instrument(module)

                spec.loader.exec_module = exec_module
                return spec
        return None


def write_marks() -> None:
    with open(os.environ["STARTUP_MARKS"], "w") as out:
        json.dump({"marks": MARKS, "steps": STEPS}, out)


if __name__ == "__main__":
    sys.meta_path.insert(0, Milestones())
    atexit.register(write_marks)
    from mobile_agent.cli.app import main

    mark("cli_imported")
    main(sys.argv[1:])
