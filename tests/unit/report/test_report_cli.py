"""The report and export commands, mounted on a throwaway Typer app as cli.py mounts them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from mobile_agent.cli.report import eval_offline_command, export_command, replay_command, report_command
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
    assert out.is_file() and "report written" in result.output
    result = CliRunner().invoke(app, ["report", "--run", run_id, "-o", str(tmp_path), "--db", url])
    assert result.exit_code == 0, result.output
    assert (tmp_path / f"report-run-{run_id}.html").is_file()


def test_report_command_needs_exactly_one_target(app, db) -> None:
    url, run_id, episode = db
    for args in ([], [episode, "--run", run_id]):
        result = CliRunner().invoke(app, ["report", *args, "--db", url])
        assert isinstance(result.exception, UserError)
        assert result.exception.hint


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
