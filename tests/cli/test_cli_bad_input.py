"""Bad input through the real command line, each in a process of its own: one `error:` line, a `hint:` line,
exit code 2, no traceback, and quickly."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.conftest import finished


def _cli(tmp_path: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(tmp_path), "COLUMNS": "200"}
    env.pop("MOBILE_AGENT_DB", None)
    return finished(list(args), tmp_path, env, timeout)


def _lol() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        lines.append(f"{chr(97 + i)}: &{chr(97 + i)} [" + ",".join([f"*{chr(96 + i)}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def _files(tmp_path: Path) -> None:
    (tmp_path / "laughs.yaml").write_text(_lol())
    (tmp_path / "deep.yaml").write_text("- " + "[" * 5000 + "]" * 5000 + "\n")
    (tmp_path / "devices.yaml").write_text("adb: 127.0.0.1:99999\nphones:\n  - serial: emulator-5554\n")
    with sqlite3.connect(tmp_path / "foreign.db") as connection:
        connection.executescript(
            "CREATE TABLE episodes (id INTEGER, what TEXT); CREATE TABLE steps (n INTEGER);"
        )


CASES = {
    "empty task": (["run", ""], "task is empty"),
    "blank task": (["run", "  \t"], "task is empty"),
    "billion laughs task file": (["batch", "laughs.yaml", "--db", "sqlite:///s.db"], "YAML refused"),
    "5000-deep task file": (["batch", "deep.yaml", "--db", "sqlite:///s.db"], "YAML refused"),
    "bad adb port in devices.yaml": (["devices", "--devices", "devices.yaml"], "1-65535"),
    "base port past 65535": (["sim", "up", "--base-port", "65534", "--phones", "4"], "ports end at 65535"),
    "model port 99999": (["sim", "model", "--port", "99999"], "not a TCP port"),
    "missing scripts": (["sim", "model", "--port", "0", "--scripts", "/nonexistent"], "no such script"),
    "deny with =": (["run", "打开设置", "--deny", "pay@app=allow"], "'=' has no place"),
    "unknown run": (["episodes", "--run", "zzz"], "no run matches"),
    "unknown hex run": (["episodes", "--run", "abc123"], "no run matches"),
    "foreign sqlite": (["episodes", "--db", "sqlite:///foreign.db"], "not a mobile-agent store"),
    "export name climbs out": (
        ["export", "--run", "abc", "-f", "sharegpt", "--name", "../../x"],
        "plain name",
    ),
    "export name absolute": (["export", "--run", "abc", "-f", "sharegpt", "--name", "/tmp/x"], "plain name"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_one_line_with_a_hint_and_exit_2(tmp_path, case):
    _files(tmp_path)
    args, words = CASES[case]
    started = time.monotonic()
    done = _cli(tmp_path, *args)
    assert time.monotonic() - started < 30
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and words in errors[0], done.stderr
    assert any(line.startswith("hint:") for line in done.stderr.splitlines()), done.stderr
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert not (tmp_path.parent / "x.jsonl").exists() and not Path("/tmp/x.jsonl").exists()
