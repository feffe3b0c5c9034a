"""Issue 23's CLI leftovers through the real command line, each in a process of its own: a malformed model URL,
an unknown family on submit, a yes where a number goes, a script folder with no scripts — one `error:` line, a
`hint:`, exit 2 at once, nothing stored; and a SQLite URL in an error shown with all its slashes."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from mobile_agent.model.families import FAMILIES
from mobile_agent.sim.farm import free_port
from tests.cli.conftest import finished


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(tmp_path), "COLUMNS": "200"}
    env.pop("MOBILE_AGENT_DB", None)
    return finished(list(args), tmp_path, env, 60)


def _one_error(done: subprocess.CompletedProcess, words: str) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and words in errors[0], done.stderr
    hints = [line for line in done.stderr.splitlines() if line.startswith("hint:")]
    assert len(hints) == 1, done.stderr
    assert done.returncode == 2, (done.returncode, done.stderr)
    return hints[0]


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://", "is not an http(s) URL"),
        ("http://[::1/v1", "is not a valid URL"),
        ("http://a b/v1", "spaces or control characters"),
        ("http://%zz/v1", "names no valid host"),
        ("http://-/v1", "names no valid host"),
        ("http://1.2.3.4.5/v1", "names no valid host"),
        ("http://127.0.0.1:0/v1", "port 0"),
    ],
)
def test_a_malformed_base_url_is_a_usage_error_before_any_phone(tmp_path: Path, url: str, words: str) -> None:
    # No adb server listens on that port: the URL is judged first, without retries, whatever the phones say.
    started = time.monotonic()
    done = _cli(tmp_path, "run", "打开设置", "--base-url", url, "--adb", f"127.0.0.1:{free_port()}")
    assert time.monotonic() - started < 20
    hint = _one_error(done, f"model endpoint {url!r}")
    assert words in done.stderr and "http://127.0.0.1:8000/v1" in hint


def test_submit_refuses_an_unknown_family_and_stores_nothing(tmp_path: Path) -> None:
    (tmp_path / "tasks.yaml").write_text("- 打开设置\n", encoding="utf-8")
    done = _cli(tmp_path, "submit", "tasks.yaml", "--family", "bogus", "--db", "sqlite:///q.db")
    hint = _one_error(done, "unknown model family 'bogus'")
    assert all(name in hint for name in FAMILIES)
    assert not (tmp_path / "q.db").exists()


@pytest.mark.parametrize(
    "command", [["submit", "tasks.yaml", "--db", "sqlite:///q.db"], ["tasks", "check", "tasks.yaml"]]
)
def test_a_yes_for_repeats_is_refused(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "tasks.yaml").write_text("- task: 打开设置\n  repeats: true\n", encoding="utf-8")
    _one_error(_cli(tmp_path, *command), "tasks.yaml:2: repeats: expected a number, got true")


def test_sim_model_with_a_folder_of_no_scripts_fails_at_once(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "notes.txt").write_text("not a script", encoding="utf-8")
    started = time.monotonic()
    done = _cli(tmp_path, "sim", "model", "--port", "0", "--scripts", "scripts")
    assert time.monotonic() - started < 20
    _one_error(done, "holds no *.yaml scripts")


def test_a_sqlite_url_in_an_error_keeps_its_slashes(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "foreign.db") as connection:
        connection.executescript(
            "CREATE TABLE episodes (id INTEGER, what TEXT); CREATE TABLE steps (n INTEGER);"
        )
    url = f"sqlite:///{tmp_path / 'foreign.db'}"  # four slashes: an absolute path
    assert url.startswith("sqlite:////")
    _one_error(_cli(tmp_path, "episodes", "--db", url), f"{url} is not a mobile-agent store")
