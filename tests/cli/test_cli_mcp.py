"""`mobile-agent mcp` without the mcp extra: one line and the install hint, exit 2, and nothing on stdout (a
desktop client reads stdout as the protocol)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_mcp(tmp_path: Path, *args: str, shadow: bool) -> subprocess.CompletedProcess:
    env = {**os.environ, "MOBILE_AGENT_DB": f"sqlite:///{tmp_path / 'db.sqlite'}"}
    if (
        shadow
    ):  # an `mcp` that cannot be imported stands first on the path, as if the extra were not installed
        fake = tmp_path / "site" / "mcp"
        fake.mkdir(parents=True)
        (fake / "__init__.py").write_text("raise ImportError(\"No module named 'mcp'\")\n", encoding="utf-8")
        env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "site"), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "mobile_agent.cli.app", "mcp", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_without_the_extra_it_says_how_to_install_it(tmp_path: Path) -> None:
    done = run_mcp(tmp_path, shadow=True)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert (
        lines[0].startswith("error: `mobile-agent mcp` needs the MCP SDK") and "Traceback" not in done.stderr
    )
    assert "pip install 'mobile-agent[mcp]'" in lines[-1]


def test_an_unknown_transport_is_refused(tmp_path: Path) -> None:
    done = run_mcp(tmp_path, "--transport", "carrier-pigeon", shadow=False)
    assert done.returncode == 2 and done.stdout == ""
    assert "unknown transport 'carrier-pigeon'" in done.stderr and "--transport stdio" in done.stderr
