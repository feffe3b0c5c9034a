"""The farm commands' user errors: one line and a hint, exit code 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from mobile_agent.cli import farm as farm_cli


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as caught:
        farm_cli.main(list(argv))
    return caught.value.code, capsys.readouterr().err


def test_batch_needs_a_task_file_or_resume(capsys, tmp_path: Path) -> None:
    code, err = run(capsys, "batch", "--db", f"sqlite:///{tmp_path / 'x.db'}")
    assert code == 2 and "either a task file or --resume" in err and "hint:" in err and "Traceback" not in err


def test_bad_task_file_names_file_and_line(capsys, tmp_path: Path) -> None:
    tasks = tmp_path / "t.yaml"
    tasks.write_text("- task: ok\n- task: x\n  max_steps: 0\n", encoding="utf-8")
    code, err = run(capsys, "submit", str(tasks), "--db", f"sqlite:///{tmp_path / 'x.db'}")
    assert code == 2 and "t.yaml:3" in err and "max_steps" in err


def test_unknown_reset_and_unknown_run(capsys, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'x.db'}"
    tasks = tmp_path / "t.jsonl"
    tasks.write_text('"open settings"\n', encoding="utf-8")
    code, err = run(capsys, "batch", str(tasks), "--db", db, "--reset", "reboot")
    assert code == 2 and "--reset" in err
    code, err = run(capsys, "runs", "show", "abcdef", "--db", db)
    assert code == 2 and "abcdef" in err


def test_submit_then_runs(capsys, tmp_path: Path) -> None:
    import json

    db = f"sqlite:///{tmp_path / 'x.db'}"
    tasks = tmp_path / "t.jsonl"
    tasks.write_text('"a"\n{"task": "b", "repeats": 2}\n', encoding="utf-8")
    with pytest.raises(SystemExit) as caught:
        farm_cli.main(["submit", str(tasks), "--db", db, "--json"])
    submitted = json.loads(capsys.readouterr().out)
    assert caught.value.code == 0 and submitted["tasks"] == 3
    with pytest.raises(SystemExit):
        farm_cli.main(["runs", "--db", db, "--json"])
    [run_row] = json.loads(capsys.readouterr().out)
    assert run_row["run_id"] == submitted["run_id"] and run_row["tasks"] == 3 and run_row["pending"] == 3
