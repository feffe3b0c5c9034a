"""`mobile-agent inbox`, `inbox answer` and `mobile-agent console` as a user runs them: bad input is one line and
exit 2; the console prints exactly one line with its address and token, and warns off the loopback."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import timedelta
from pathlib import Path

import pytest

from mobile_agent.actions import Action, Outcome
from mobile_agent.cli.app import main
from mobile_agent.store import answers as answer_db
from mobile_agent.store import pauses
from mobile_agent.store.convert import now_utc
from mobile_agent.store.store import TrajectoryStore


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as caught:
        main(list(argv))
    out = capsys.readouterr()
    return caught.value.code, out.out, out.err


def paused(store: TrajectoryStore, *, window: bool) -> str:
    episode = store.start_episode("pay", device="phone-0", family="f", model="m")
    store.finish_episode(episode.id, Outcome.NEEDS_USER)
    pause = pauses.create_pause(
        store,
        pauses.PauseRecord(
            episode.id,
            0,
            "confirm",
            "Pay 25?",
            device="phone-0",
            reserve_s=60,
            pending_action=Action.tap(1, 2),
        ),
    )
    if window:
        answer_db.open_window(
            store, pause.id, episode.id, answer_by=now_utc() + timedelta(minutes=5), held_by="w1"
        )
    return episode.id


def test_inbox_lists_and_answers(capsys, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("MOBILE_AGENT_DB", raising=False)
    db = f"sqlite:///{tmp_path / 'x.db'}"
    with TrajectoryStore.open(db) as store:
        held = paused(store, window=True)
    code, out, _ = run_cli(capsys, "inbox", "--db", db, "--json")
    assert code == 0
    [row] = json.loads(out)
    assert row["episode"] == held and row["held"] is True and row["proposed"] == "tap(1, 2)"
    assert row["answer"] == f"mobile-agent inbox answer {held} --reply yes|no"
    code, out, _ = run_cli(capsys, "inbox", "--db", db)
    assert code == 0 and held in out and "Pay 25?" in out

    code, _, err = run_cli(capsys, "inbox", "answer", held, "--reply", "perhaps", "--db", db)
    assert code == 2 and "yes or no" in err and "hint:" in err and "Traceback" not in err
    code, _, err = run_cli(capsys, "inbox", "answer", "nosuch", "--reply", "yes", "--db", db)
    assert code == 2 and "nosuch" in err
    code, out, _ = run_cli(capsys, "inbox", "answer", held[:6], "--reply", "yes", "--db", db, "--json")
    assert code == 0
    [done] = json.loads(out)
    assert (
        done["by"] == "worker" and "@" in done["who"]
    )  # the OS user; the worker holding the phone continues
    code, _, err = run_cli(capsys, "inbox", "answer", held, "--reply", "no", "--db", db)
    assert code == 2 and "already answered" in err


def _start_console(db: str, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "mobile_agent.cli.app", "console", "--db", db, "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MOBILE_AGENT_DB": db},
    )


def test_the_console_prints_one_line_and_needs_its_token(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'x.db'}"
    TrajectoryStore.open(db).close()
    process = _start_console(db, "--token-file", str(tmp_path / "token"))
    try:
        line = process.stdout.readline().strip()
        match = re.fullmatch(r"console: http://127\.0\.0\.1:(\d+)/\?token=(\S+)", line)
        assert match, line
        port, token = match.groups()
        assert (tmp_path / "token").read_text().strip() == token
        with pytest.raises(urllib.error.HTTPError) as denied:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/inbox", timeout=10)
        assert denied.value.code == 401
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with opener.open(line.removeprefix("console: "), timeout=10) as ok:  # the token becomes a cookie
            assert ok.status == 200 and ok.url == f"http://127.0.0.1:{port}/"
            assert b"Waiting for a person" in ok.read()
    finally:
        process.terminate()
        out, err = process.communicate(timeout=20)
    assert out.strip() == "" and "warning" not in err  # that one line, nothing more


def test_a_console_off_the_loopback_warns_to_use_tls(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'x.db'}"
    TrajectoryStore.open(db).close()
    process = _start_console(db, "--host", "0.0.0.0")
    try:
        line = process.stdout.readline()
        assert line.startswith("console: http://0.0.0.0:")
        time.sleep(0.2)
    finally:
        process.terminate()
        _, err = process.communicate(timeout=20)
    assert "TLS" in err


def test_a_bad_token_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("x")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mobile_agent.cli.app",
            "console",
            "--db",
            f"sqlite:///{tmp_path / 'x.db'}",
            "--token-file",
            str(tmp_path / "token"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "no usable token" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("option", "said"),
    [(("--adb", "no address"), "bad adb server address"), (("--live-fps", "100"), "--live-fps")],
)
def test_bad_live_options_are_one_line_and_exit_2(tmp_path: Path, option: tuple[str, str], said: str) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mobile_agent.cli.app",
            "console",
            "--db",
            f"sqlite:///{tmp_path / 'x.db'}",
            *option,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and said in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""  # nothing listened
