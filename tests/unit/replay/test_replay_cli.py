"""`mobile-agent replay` refuses bad input with one line and a hint (exit 2) before touching a phone or the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from mobile_agent.cli.app import main

DB = ["--db", "sqlite:///{tmp}/store.db"]


def _run(tmp_path: Path, capsys, *args: str) -> tuple[int, str]:
    argv = ["replay", *[a.replace("{tmp}", str(tmp_path)) for a in args]]
    with pytest.raises(SystemExit) as ended:
        main(argv)
    err = capsys.readouterr().err
    return int(ended.value.code or 0), err


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["E1", "--reset", "reboot"], "--reset"),
        (["E1", "--on-divergence", "panic"], "stop, warn or continue"),
        (["E1", "--allow", "pay@"], ""),
        (["--run", "R", "--dry-run"], "--dry-run replays one episode"),
        (["E1", "E2", "--until", "3"], "--until replays one episode"),
        (["E1", "-o", "out.html"], "--report writes a suite's report"),
        ([], "name the episode"),
        (["--episodes", "{tmp}/missing.txt"], "cannot read"),
        (["E1", "--wait", "-1"], ""),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys, args, said) -> None:
    code, err = _run(tmp_path, capsys, *args, *DB)
    assert code == 2, err
    assert "Traceback" not in err and "error:" in err and said in err
    assert "hint:" in err


def test_an_unknown_episode_is_a_user_error_and_the_store_keeps_nothing(tmp_path: Path, capsys) -> None:
    code, err = _run(tmp_path, capsys, "nosuchepisode", "--device", "x", *DB)
    assert code == 2 and "nosuchepisode" in err and "hint:" in err
