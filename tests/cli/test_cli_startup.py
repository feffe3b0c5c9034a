"""The command line starts light: help, version and a typo import no command module's heavy libraries, and the
table that lists the commands without importing them says what each command itself says."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from mobile_agent.cli.app import RootCommands
from mobile_agent.cli.sim import SimCommands

HEAVY = (
    "openai",
    "sqlalchemy",
    "uiautomator2",
    "adbutils",
    "starlette",
    "uvicorn",
    "jinja2",
    "mobile_agent.sim",
)

# Runs the CLI's entry point in a fresh interpreter, then prints which heavy modules it had imported.
PROBE = """
import json, sys
from mobile_agent.cli.app import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
heavy = sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in HEAVY))
print("\\n" + json.dumps({"code": code, "heavy": heavy}))
"""


def _probe(args: list[str]) -> tuple[dict, str]:
    done = subprocess.run(
        [sys.executable, "-c", f"HEAVY = {HEAVY!r}\n{PROBE}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, COLUMNS="200"),
    )
    *output, last = done.stdout.rstrip("\n").split("\n")
    return json.loads(last), "\n".join(output) + done.stderr


@pytest.mark.parametrize(
    "args",
    [["--help"], [], ["--version"], ["run", "--help"], ["sim", "--help"], ["frobnicate"]],
    ids=["help", "no-args", "version", "run-help", "sim-help", "typo"],
)
def test_help_version_and_typos_import_no_heavy_library(args: list[str]) -> None:
    result, output = _probe(args)
    assert result["code"] in (0, 2), output
    assert result["heavy"] == [], f"`mobile-agent {' '.join(args)}` imported {result['heavy']}"


def test_the_listing_names_every_command_with_its_line() -> None:
    result, output = _probe(["--help"])
    assert result["code"] == 0
    for entry in RootCommands.entries:
        assert entry.name in output
        assert entry.summary.split()[0] in output  # rich wraps the line; its first word starts the row


def test_a_typo_still_gets_suggestions_from_the_table() -> None:
    result, output = _probe(["verfy"])
    assert result["code"] == 2
    assert "verify" in output and result["heavy"] == []


@pytest.mark.parametrize("group", [RootCommands, SimCommands], ids=["root", "sim"])
def test_each_listed_line_is_the_commands_own(group: type) -> None:
    """The table's line is what `--help` showed when every command was imported: its first paragraph."""
    for entry in group.entries:
        command = entry.load()
        assert command.name == entry.name
        own = " ".join((command.short_help or command.help or "").split("\n\n")[0].split())
        assert own == entry.summary, entry.name
