"""Integration fixtures: a private adb server for the session and farms of simulated phones registered with it.

Nothing here touches a user's adb server on 5037: the server runs from the adbutils-bundled binary on a free port,
ADBUTILS_ADB_PATH pins that binary, and ANDROID_ADB_SERVER_PORT points any stray `adb start-server` at the same
private port. Every farm is disconnected and stopped at teardown, and the server is killed at the end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml

from mobile_agent.sim.farm import AdbServer, SimFarm, bundled_adb_path, free_port

if TYPE_CHECKING:
    from mobile_agent.store.records import RunInfo
    from mobile_agent.store.store import TrajectoryStore


@pytest.fixture(scope="session")
def adb_server() -> Iterator[AdbServer]:
    pinned = {"ADBUTILS_ADB_PATH": bundled_adb_path()}
    port = free_port()
    pinned["ANDROID_ADB_SERVER_PORT"] = str(port)
    saved = {key: os.environ.get(key) for key in pinned}
    os.environ.update(pinned)
    server = AdbServer(port).ensure_running()
    try:
        yield server
    finally:
        server.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture
def sim_farm(adb_server: AdbServer) -> Iterator[Callable[..., SimFarm]]:
    """Factory: `farm = sim_farm(n=2, profile="instant", ...)` — a started SimFarm on the session's adb server."""
    farms: list[SimFarm] = []

    def make(n: int = 1, **kwargs) -> SimFarm:
        farm = SimFarm(n, adb_port=adb_server.port, **kwargs).start()
        farms.append(farm)
        return farm

    yield make
    for farm in reversed(farms):
        farm.stop()


@pytest.fixture(scope="session")
def adb(adb_server: AdbServer) -> Callable[..., subprocess.CompletedProcess]:
    """Run the real adb binary against the private server: `adb("-s", serial, "shell", "id")` (bytes output)."""

    def run(*args: str, timeout: float = 60, check: bool = True) -> subprocess.CompletedProcess:
        cmd = [adb_server.adb_path, "-P", str(adb_server.port), *args]
        return subprocess.run(
            cmd, capture_output=True, timeout=timeout, check=check, stdin=subprocess.DEVNULL
        )

    return run


@dataclass(frozen=True)
class WorkerHosts:
    """Two hosts' worth of `worker` set-up: a devices.yaml per host, a task file, a model script, and the
    environment that keeps every screenshot under `shots`."""

    inventories: list[Path]
    tasks: Path
    script: Path
    shots: Path
    env: dict[str, str]

    @contextmanager
    def queue(self, db: str, *, latency_ms: int) -> Iterator[tuple[TrajectoryStore, RunInfo]]:
        """The task file submitted as a run to the queue at `db`, served by a scripted ui-venus-2 model that
        answers after `latency_ms`: (the store, the run), while the model runs."""
        from mobile_agent.farm.scheduler.runs import submit
        from mobile_agent.sim.servers.model_server import SimModelServer
        from mobile_agent.store.store import TrajectoryStore

        with (
            TrajectoryStore.open(db, root=self.shots) as store,
            SimModelServer(family="ui-venus-2", scripts=[self.script], latency_ms=latency_ms) as model,
        ):
            config = {"base_url": [model.base_url], "model": model.served_model}
            yield store, submit(store, self.tasks, config=config)

    def worker(self, db: str, inventory: Path, run_id: str) -> subprocess.Popen:
        """`mobile-agent-farm worker --json` serving the phones of `inventory` from the queue at `db`."""
        return subprocess.Popen(
            [sys.executable, "-m", "mobile_agent.cli.farm", "worker", "--db", db, "--devices", str(inventory)]
            + ["--run", run_id, "--reset", "none", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=self.env,
        )


@pytest.fixture
def worker_hosts(sim_farm, tmp_path: Path) -> Callable[..., WorkerHosts]:
    """Factory: `worker_hosts(phones_per_host=3, tasks=30, task="pg drill", script=SCRIPT)` — a farm of twice
    that many phones split between two inventories, and `tasks` numbered copies of `task` in tasks.jsonl."""

    def make(*, phones_per_host: int, tasks: int, task: str, script: str) -> WorkerHosts:
        farm = sim_farm(2 * phones_per_host)
        inventories = []
        hosts = (farm.serials[:phones_per_host], farm.serials[phones_per_host:])
        for index, serials in enumerate(hosts):
            path = tmp_path / f"host{index}.yaml"
            data = {
                "adb": f"127.0.0.1:{farm.adb_port}",
                "discover": False,
                "devices": [{"serial": s} for s in serials],
            }
            path.write_text(yaml.safe_dump(data), encoding="utf-8")
            inventories.append(path)
        task_file = tmp_path / "tasks.jsonl"
        task_file.write_text(
            "".join(json.dumps({"task": f"{task} #{i}"}) + "\n" for i in range(tasks)), "utf-8"
        )
        script_file = tmp_path / "script.yaml"
        script_file.write_text(script, encoding="utf-8")
        shots = tmp_path / "shots"
        env = {**os.environ, "MOBILE_AGENT_DATA": str(shots)}
        return WorkerHosts(inventories, task_file, script_file, shots, env)

    return make
