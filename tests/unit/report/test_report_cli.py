"""The report and export commands, mounted on a throwaway Typer app as cli.py mounts them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from mobile_agent.cli.replay import replay_command
from mobile_agent.cli.report import eval_offline_command, export_command, report_command
from mobile_agent.errors import UserError
from mobile_agent.store.store import TrajectoryStore

from .conftest import record_episode


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()
    app.command("replay")(replay_command)
    app.command("report")(report_command)
    app.command("export")(export_command)
    app.command("eval-offline")(eval_offline_command)
    return app


@pytest.fixture
def db(tmp_path: Path) -> tuple[str, str, str]:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with TrajectoryStore.open(url) as store:
        run = store.create_run("cli")
        episode = record_episode(store, run_id=run.id).episode_id
    return url, run.id, episode


def test_report_command_writes_the_html_file(app, db, tmp_path: Path) -> None:
    url, run_id, episode = db
    out = tmp_path / "r.html"
    result = CliRunner().invoke(app, ["report", episode[:6], "-o", str(out), "--db", url])
    assert result.exit_code == 0, result.output
    assert out.is_file() and (tmp_path / "r_files" / "shots").is_dir()
    assert f"report written: {out} (open this page)" in result.stdout
    result = CliRunner().invoke(app, ["report", "--run", run_id, "-o", str(tmp_path), "--db", url])
    assert result.exit_code == 0, result.output
    assert (tmp_path / f"report-run-{run_id}.html").is_file()


def test_report_command_shows_progress_on_stderr_and_json_on_stdout(app, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with TrajectoryStore.open(url) as store:
        run = store.create_run("many")
        for _ in range(12):
            record_episode(store, run_id=run.id)
    out = tmp_path / "out"
    shown = CliRunner().invoke(
        app, ["report", "--run", run.id, "-o", str(out), "--per-page", "4", "--db", url]
    )
    assert shown.exit_code == 0, shown.output
    lines = [line for line in shown.stderr.splitlines() if line.startswith("writing report:")]
    assert lines[-1] == "writing report: 12 of 12 episodes" and 2 <= len(lines) <= 11
    assert "3 page(s) of episodes" in shown.stdout
    as_json = CliRunner().invoke(app, ["report", "--run", run.id, "-o", str(out), "--json", "--db", url])
    assert as_json.exit_code == 0 and "writing report" not in as_json.stderr
    answer = json.loads(as_json.stdout)
    assert answer["report"] == str((out / f"report-run-{run.id}.html").resolve())
    assert len(answer["pages"]) == 3 and answer["episodes"] == 12 and answer["pictures"] == 12 * 8
    quiet = CliRunner().invoke(app, ["report", "--run", run.id, "-o", str(out), "-q", "--db", url])
    assert quiet.exit_code == 0 and quiet.stderr == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["abcdef123456"], "no episode with id 'abcdef123456'"),
        (["--run", "abcdef123456"], "no run with id 'abcdef123456'"),
        (["EPISODE", "-o", "{tmp}/a-file"], "is a file, not a folder or an .html report"),
        (["EPISODE", "-o", "{tmp}/a-file/r.html"], "is a file, so the report cannot be written there"),
        (["EPISODE", "--per-page", "0"], "Invalid value for '--per-page'"),
    ],
)
def test_report_command_bad_input_is_one_line_and_exit_2(db, tmp_path: Path, args, message) -> None:
    """The command as a user runs it, through the real main(): one error line, a hint, exit 2, no traceback."""
    url, _, episode = db
    (tmp_path / "a-file").write_text("mine")
    argv = [a.replace("EPISODE", episode).replace("{tmp}", str(tmp_path)) for a in args]
    done = subprocess.run(
        [sys.executable, "-m", "mobile_agent.cli.app", "report", *argv, "--db", url],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "300"},
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("error:") and message in lines[0], lines
    assert len(lines) == 2 and lines[1].startswith("hint:"), lines
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert (tmp_path / "a-file").read_text() == "mine"


def test_export_command_writes_jsonl_and_reports_what_it_skipped(app, db, tmp_path: Path) -> None:
    url, run_id, _ = db
    out = tmp_path / "data"
    result = CliRunner().invoke(
        app,
        ["export", "--run", run_id, "--format", "sharegpt", "-o", str(out), "--db", url],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    lines = (out / "mobile_agent_sharegpt.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6 and all(json.loads(line)["images"] for line in lines)
    assert "dataset_info.json" in result.output and "skipped 2 step(s)" in result.output


def test_export_command_refuses_unknown_formats_and_modes(app, db, tmp_path: Path) -> None:
    url, _, episode = db
    bad_format = CliRunner().invoke(app, ["export", episode, "--format", "alpaca", "--db", url])
    assert isinstance(bad_format.exception, UserError) and "sharegpt" in bad_format.exception.hint
    bad_mode = CliRunner().invoke(app, ["export", episode, "-f", "swift", "--images", "link", "--db", url])
    assert isinstance(bad_mode.exception, UserError)
    nothing = CliRunner().invoke(app, ["export", "-f", "swift", "--db", url])
    assert isinstance(nothing.exception, UserError) and "--run" in nothing.exception.hint


def test_replay_command_takes_runs_policy_words_and_stops_on_divergence_by_default(app, db) -> None:
    url, _, episode = db
    shown = CliRunner().invoke(app, ["replay", "--help"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0
    text = " ".join(shown.output.replace("│", " ").split())  # rich draws the options in a box
    for option in ("--allow", "--deny", "--policy", "--non-interactive", "--on-divergence"):
        assert option in text
    assert "stop = end the replay before touching it (default)" in text
    assert "warn = record the divergence, warn and act anyway" in text
    # Bad policy words are refused before any phone or store is touched, with run's hint.
    for bad in (["--allow", "pay@"], ["--deny", "steal"], ["--policy", "pay=maybe"]):
        result = CliRunner().invoke(app, ["replay", episode, "--db", url, *bad])
        assert isinstance(result.exception, UserError), (bad, result.output)
        assert result.exception.hint
