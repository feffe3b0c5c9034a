"""Faults under the store while `mobile-agent run` works on a simulated phone: the disk fills up (a small tmpfs),
the store is read-only (a read-only mount and a read-only SQLite URI). Each is one line with a hint on stderr,
no traceback, and the episode ends as error:store where that can still be written."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from mobile_agent.actions import Action
from mobile_agent.sim.servers.model_server import Script, SimModelServer, Turn

CLI = [sys.executable, "-m", "mobile_agent.cli.app"]
TASK = "磁盘测试：打开微信"


def _mount_tmpfs(path: Path, size: str) -> None:
    path.mkdir(parents=True, exist_ok=True)
    if shutil.which("mount") is None or (hasattr(os, "geteuid") and os.geteuid() != 0):
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"this machine does not allow a tmpfs mount: {done.stderr.decode().strip()}")


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
    _mount_tmpfs(mount, "2m")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def _run(args, tmp_path, db):
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("MOBILE_AGENT_DB", None)
    return subprocess.run(
        [*CLI, "run", TASK, *args, "--db", db, "--non-interactive", "--model", "sim"],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def _phone_args(farm, server: SimModelServer) -> list[str]:
    """`run`'s options for the farm's only phone and the simulated model."""
    return ["--adb", f"127.0.0.1:{farm.adb_port}", "--device", farm.serials[0], "--base-url", server.base_url]


def _one_line_error(done: subprocess.CompletedProcess, *words: str) -> None:
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and any(w in errors[0] for w in words), done.stderr
    assert any(line.startswith("hint:") for line in done.stderr.splitlines()), done.stderr
    assert done.returncode != 0


def _script() -> list[Script]:
    # A long episode of screenshots: each step writes a JPEG into the store.
    turns = tuple(Turn(action=Action.launch("com.tencent.mm")) for _ in range(40))
    return [Script(task=TASK, turns=(*turns, Turn(action=Action.finish("done"))))]


def test_disk_full_mid_episode_ends_it_as_error_store_in_one_line(sim_farm, small_disk, tmp_path):
    farm = sim_farm(1, scenario="wechat_send")
    db_path = small_disk / "mobile_agent.db"
    db = f"sqlite:///{db_path}"
    with SimModelServer(family="ui-venus-2", scripts=_script(), model_name="sim") as server:
        # Leave a little room: the store opens and the episode starts, then screenshots fill the disk.
        (small_disk / "ballast").write_bytes(b"\0" * (1_500_000))
        args = _phone_args(farm, server)
        done = _run([*args, "--max-steps", "60", "--no-popup-rules"], tmp_path, db)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    assert done.returncode != 0
    full = "disk holding the store is full" in done.stderr or "outcome: error:store" in done.stdout
    assert full, (done.stdout, done.stderr)
    (small_disk / "ballast").unlink()
    with sqlite3.connect(db_path) as connection:
        rows = connection.execute("SELECT status, outcome, outcome_detail FROM episodes").fetchall()
    assert rows, "the episode was started before the disk filled"
    # Ended as error:store when the end could still be written; else left for the next command to end.
    assert all(outcome in ("error:store", None) for _status, outcome, _detail in rows), rows
    if rows[0][1] == "error:store":
        assert "full" in rows[0][2]


def test_read_only_store_is_one_line_and_show_still_reads(sim_farm, small_disk, tmp_path):
    farm = sim_farm(1, scenario="wechat_send")
    db = f"sqlite:///{small_disk / 'mobile_agent.db'}"
    with SimModelServer(family="ui-venus-2", scripts=_script(), model_name="sim") as server:
        args = _phone_args(farm, server)
        first = _run([*args, "--max-steps", "2"], tmp_path, db)
        assert "Traceback" not in first.stderr, first.stderr
        remount = subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], capture_output=True)
        if remount.returncode != 0:
            pytest.skip(f"cannot remount read-only: {remount.stderr.decode().strip()}")
        done = _run(args, tmp_path, db)
    # SQLite cannot open a WAL database on a read-only mount at all: "cannot open", with the hint.
    _one_line_error(done, "read-only", "cannot open")
    listed = subprocess.run(
        [*CLI, "episodes", "--db", db], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert "Traceback" not in listed.stderr, listed.stderr


def test_read_only_sqlite_uri_refuses_to_run_in_one_line(sim_farm, tmp_path):
    farm = sim_farm(1, scenario="wechat_send")
    path = tmp_path / "ro" / "mobile_agent.db"
    with SimModelServer(family="ui-venus-2", scripts=_script(), model_name="sim") as server:
        args = _phone_args(farm, server)
        _run([*args, "--max-steps", "1"], tmp_path, f"sqlite:///{path}")
        done = _run(args, tmp_path, f"sqlite:///file:{path}?mode=ro&uri=true")
    _one_line_error(done, "read-only")
