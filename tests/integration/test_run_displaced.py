"""A run whose phone is taken over with `--force` stops: two real `mobile-agent` processes on one simulated phone.

The displaced process learns it at its lease's next renewal and from then on does nothing on the phone: its episode
ends as ``interrupted`` naming who took the phone, it exits as interrupted (130), and it leaves the lease to the
new holder. Proof from the phone's own event log: nothing the first run was about to do reaches the phone after the
takeover. The displaced process is a `run`, or a `resume` of a paused episode (both hold the phone the same way).

The model endpoint in front of the simulated model holds chosen requests until the test lets them through, so
that the moments are the test's: the first run's model answers only after the takeover was noticed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from mobile_agent.actions import Outcome
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store import phones as phone_db
from mobile_agent.store.owners import HEARTBEAT_S
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.store import TrajectoryStore

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "mobile_agent.cli.app"]
FIRST = "接管测试：打开微信然后回到桌面"  # launch 微信, then (held) key home, then finish
ASKING = (
    "接管测试：先问人再回到桌面"  # call the user (pauses), then after resume (held) key home, then finish
)
SECOND = "接管者：返回"  # key back, then (held) finish
SCRIPTS = {
    "first.yaml": f"""task: {FIRST}
turns:
  - action: {{kind: launch, app: 微信}}
  - action: {{kind: key, key: home}}
  - action: {{kind: finish, text: 完成}}
""",
    "asking.yaml": f"""task: {ASKING}
turns:
  - action: {{kind: launch, app: 微信}}
  - action: {{kind: call_user, text: 请确认}}
  - action: {{kind: key, key: home}}
  - action: {{kind: finish, text: 完成}}
""",
    "second.yaml": f"""task: {SECOND}
turns:
  - action: {{kind: key, key: back}}
  - action: {{kind: finish, text: 完成}}
""",
}
INPUTS = {"tap", "double_tap", "long_press", "swipe", "drag", "key", "text", "clear_text", "paste", "launch"}
WAIT_S = 60.0  # how long the test waits for any one thing before it fails


@dataclass
class Gate:
    """The ``turn``-th chat request (from 0) that carries ``task`` waits until ``release`` is set."""

    task: str
    turn: int
    reached: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


class HoldingEndpoint:
    """A real HTTP endpoint that forwards to the simulated model, holding the requests of its gates."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/").removesuffix("/v1")
        self.gates: list[Gate] = []
        self.seen: dict[str, int] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def hold(self, task: str, turn: int) -> Gate:
        gate = Gate(task, turn)
        self.gates.append(gate)
        return gate

    def __enter__(self) -> HoldingEndpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for gate in self.gates:
            gate.release.set()
        self._server.shutdown()
        self._server.server_close()

    def _wait_at_gate(self, body: bytes) -> None:
        try:
            text = json.dumps(json.loads(body), ensure_ascii=False)
        except ValueError:
            return
        for gate in self.gates:
            if gate.task not in text:
                continue
            with self._lock:
                turn = self.seen.get(gate.task, 0)
                self.seen[gate.task] = turn + 1
            if turn == gate.turn:
                gate.reached.set()
                gate.release.wait(WAIT_S * 2)
            return

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def _forward(self, body: bytes | None) -> None:
                headers = {
                    k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")
                }
                request = urllib.request.Request(
                    endpoint.upstream + self.path, data=body, headers=headers, method=self.command
                )
                try:
                    with urllib.request.urlopen(request, timeout=WAIT_S) as response:
                        status, kind, payload = (
                            response.status,
                            response.headers.get("Content-Type"),
                            response.read(),
                        )
                except urllib.error.HTTPError as err:
                    status, kind, payload = err.code, err.headers.get("Content-Type"), err.read()
                self.send_response(status)
                self.send_header("Content-Type", kind or "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:  # noqa: N802 - the http.server convention
                self._forward(None)

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                endpoint._wait_at_gate(body)
                self._forward(body)

        return Handler


@pytest.fixture
def model(tmp_path: Path) -> Iterator[HoldingEndpoint]:
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    for name, text in SCRIPTS.items():
        (scripts / name).write_text(text, encoding="utf-8")
    with (
        SimModelServer(family="ui-venus-2", scripts=[scripts], model_name="sim") as sim,
        HoldingEndpoint(sim.base_url) as endpoint,
    ):
        yield endpoint


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MOBILE_AGENT_DB"}
    env.update(HOME=str(tmp_path), COLUMNS="200")
    return env


def _start(tmp_path: Path, args: list[str], name: str) -> tuple[subprocess.Popen, Path]:
    """A real CLI process; its stderr goes to a file the test reads while it runs."""
    log = tmp_path / f"{name}.stderr"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [*CLI, *args],
            stdout=subprocess.DEVNULL,
            stderr=err,
            stdin=subprocess.DEVNULL,
            env=_env(tmp_path),
            cwd=tmp_path,
        )
    return proc, log


def _run_args(farm, model: HoldingEndpoint, db: str, task: str, *extra: str) -> list[str]:
    phone = ["--device", farm.serials[0], "--adb", f"127.0.0.1:{farm.adb_port}"]
    return [
        "run",
        task,
        *phone,
        "--base-url",
        model.base_url,
        "--model",
        "sim",
        "--db",
        db,
        "--non-interactive",
        *extra,
    ]


def _wait(condition, what: str, procs: list[subprocess.Popen]) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    pytest.fail(f"waited {WAIT_S:.0f} s for {what}; exit codes {[p.poll() for p in procs]}")


def _stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def _inputs(phone, since: float = 0.0) -> list[tuple[str, str]]:
    """What was done on the phone (launches and input) since ``since``, from the phone's own event log."""
    with phone.lock:
        events = list(phone.events)
    return [
        (e.kind, str(e.detail.get("key") or e.detail.get("package") or ""))
        for e in events
        if e.kind in INPUTS and e.time >= since
    ]


def _displaced_args(kind: str, farm, model, db: str, tmp_path: Path) -> list[str]:
    """The command that will be displaced: a run, or the resume of an episode that paused for a person."""
    if kind == "run":
        return _run_args(farm, model, db, FIRST)
    paused = subprocess.run(
        [*CLI, *_run_args(farm, model, db, ASKING)],
        capture_output=True,
        text=True,
        timeout=WAIT_S * 2,
        env=_env(tmp_path),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    assert paused.returncode == 1, paused.stdout + paused.stderr
    with TrajectoryStore.open(db) as store:
        (episode,) = store.list_episodes()
        assert episode.outcome == Outcome.NEEDS_USER, episode.outcome_detail
    return ["resume", episode.id, "--reply", "好了", "--db", db, "--non-interactive"]


@pytest.mark.parametrize("displaced", ["run", "resume"])
def test_a_run_displaced_with_force_does_nothing_more_on_the_phone_and_ends_interrupted(
    sim_farm, model, tmp_path, displaced
):
    farm = sim_farm(1, scenario="wechat_send")
    phone = farm.phones[farm.serials[0]]
    db = f"sqlite:///{tmp_path / 'replays' / 'mobile_agent.db'}"
    task = FIRST if displaced == "run" else ASKING
    # The first's request for its key home (the run asked for its launch before; the paused run for its launch
    # and its call to the user): held until the takeover is noticed.
    first_held = model.hold(task, turn=1 if displaced == "run" else 2)
    args = _displaced_args(displaced, farm, model, db, tmp_path)
    second_held = model.hold(SECOND, turn=1)  # the second's finish: it keeps the phone while the test looks
    first, first_log = _start(tmp_path, args, "first")
    procs = [first]
    try:
        _wait(first_held.reached.is_set, "the first process to ask the model for its next action", procs)
        before_takeover = _inputs(phone)
        taken_at = time.time()
        second, second_log = _start(tmp_path, _run_args(farm, model, db, SECOND, "--force"), "second")
        procs.append(second)
        _wait(second_held.reached.is_set, "the second process to act and ask the model again", procs)
        _wait(
            lambda: "taken over" in first_log.read_text(), "the first process to notice the takeover", procs
        )
        first_held.release.set()  # the first's model answers now: key home, which must not reach the phone
        assert first.wait(WAIT_S) == 130, first_log.read_text()
        with TrajectoryStore.open(db) as store:  # the first left the lease to the second
            (device,) = phone_db.farm_devices(store)
            assert device.busy() and device.worker.split(":")[1] == str(second.pid), device.worker
        second_held.release.set()
        assert second.wait(WAIT_S) == 0, second_log.read_text()
    finally:
        _stop(procs)

    first_err = first_log.read_text()
    assert "Traceback" not in first_err and "stops before it touches the phone again" in first_err
    assert "interrupted: phone" in first_err and "was taken over by another process" in first_err, first_err
    assert "taking over phone" in second_log.read_text()
    with TrajectoryStore.open(db) as store:
        episodes = {e.task: e for e in store.list_episodes()}
        displaced_episode, taker = episodes[task], episodes[SECOND]
        assert displaced_episode.status is EpisodeStatus.ENDED
        assert displaced_episode.outcome == Outcome.INTERRUPTED, displaced_episode.outcome_detail
        detail = displaced_episode.outcome_detail or ""
        assert "taken over by another process" in detail and f"pid {second.pid}" in detail, detail
        assert all(s.status == "done" for s in store.steps(displaced_episode.id))
        assert not any(
            s.action is not None and s.action.key == "home" for s in store.steps(displaced_episode.id)
        )
        assert taker.outcome == Outcome.FINISHED, taker.outcome_detail
        assert not any(info.busy() for info in phone_db.farm_devices(store))  # the second gave it back
    # The phone's own log: since the takeover began only the second acted; the first's next action never came.
    assert ("launch", "com.tencent.mm") in before_takeover
    assert _inputs(phone, since=taken_at) == [("key", "back")]
    assert ("key", "home") not in _inputs(phone)


def test_without_a_takeover_the_same_run_renews_its_lease_and_runs_to_the_end(sim_farm, model, tmp_path):
    farm = sim_farm(1, scenario="wechat_send")
    phone = farm.phones[farm.serials[0]]
    db = f"sqlite:///{tmp_path / 'replays' / 'mobile_agent.db'}"
    held = model.hold(FIRST, turn=1)
    first, log = _start(tmp_path, _run_args(farm, model, db, FIRST), "first")
    try:
        _wait(held.reached.is_set, "the run to ask the model for its next action", [first])
        time.sleep(HEARTBEAT_S + 1)  # the lease is renewed meanwhile, and that must not stop the run
        held.release.set()
        assert first.wait(WAIT_S) == 0, log.read_text()
    finally:
        _stop([first])
    assert "taken over" not in log.read_text()
    with TrajectoryStore.open(db) as store:
        (episode,) = store.list_episodes()
        assert episode.outcome == Outcome.FINISHED, episode.outcome_detail
        assert not any(info.busy() for info in phone_db.farm_devices(store))
    assert _inputs(phone) == [("launch", "com.tencent.mm"), ("key", "home")]
