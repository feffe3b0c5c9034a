"""The command line as a newcomer meets it: every option explains itself, --version answers, completion is on."""

from __future__ import annotations

from typing import Any

import typer

from mobile_agent.cli.app import app


def _commands(command: Any, path: str = "mobile-agent"):
    """Every command under ``command`` (typer may vendor its own click: duck-typed on purpose)."""
    yield path, command
    if hasattr(command, "commands"):
        for name, sub in command.commands.items():
            yield from _commands(sub, f"{path} {name}")


def test_every_option_of_every_command_has_help_text() -> None:
    root = typer.main.get_command(app)
    missing = [
        f"{path} {'/'.join(param.opts)}"
        for path, command in _commands(root)
        for param in command.params
        if param.param_type_name == "option" and not (param.help or "").strip()
    ]
    assert not missing, f"options without help text: {missing}"


def test_every_command_has_help_text() -> None:
    root = typer.main.get_command(app)
    missing = [
        path for path, command in _commands(root) if not (command.help or command.short_help or "").strip()
    ]
    assert not missing, missing


def test_completion_and_version_are_offered() -> None:
    root = typer.main.get_command(app)
    names = {opt for param in root.params for opt in param.opts}
    assert {"--version", "--install-completion", "--show-completion"} <= names


def test_commands_that_print_results_offer_json() -> None:
    root = typer.main.get_command(app)
    by_path = dict(_commands(root))
    for path in ("run", "episodes", "show", "doctor", "export", "report", "tasks check"):
        opts = {opt for param in by_path[f"mobile-agent {path}"].params for opt in param.opts}
        assert "--json" in opts, path


def test_minus_v_prints_the_version_like_dash_dash_version() -> None:
    from typer.testing import CliRunner

    runner = CliRunner()
    short, long = runner.invoke(app, ["-V"]), runner.invoke(app, ["--version"])
    assert short.exit_code == 0 and short.output.startswith("mobile-agent ")
    assert short.output == long.output


def test_no_help_page_shows_a_metavar_beside_a_flag() -> None:
    """typer 0.29 prints `<bool>` beside every flag (`--help <bool>`); each command's help is rendered as a user
    sees it, and flags (which take no value) show none, while options that take one keep theirs."""
    from typer.testing import CliRunner

    runner = CliRunner()
    root = typer.main.get_command(app)
    pages = 0
    for path, command in _commands(root):
        args = path.split()[1:]
        page = runner.invoke(app, [*args, "--help"], env={"COLUMNS": "200"}, terminal_width=200)
        assert page.exit_code == 0, (path, page.output)
        assert "<bool>" not in page.output, (path, page.output)
        assert "--help" in page.output
        pages += 1
        flags = [p for p in command.params if getattr(p, "is_flag", False)]
        valued = [
            p for p in command.params if p.param_type_name == "option" and not getattr(p, "is_flag", False)
        ]
        if flags or valued:
            assert any(("<" in line) for line in page.output.splitlines()) == bool(valued), path
    assert pages > 30
