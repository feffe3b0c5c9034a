"""Every shipped scenario, as a user would run it: `mobile-agent sim up` and `mobile-agent sim model` as separate
processes, and `mobile-agent run` against them, with the ui-venus-2 and autoglm families."""

from __future__ import annotations

import re
import signal
import subprocess

import pytest

from mobile_agent.sim.farm import free_port
from mobile_agent.sim.scenario import list_scenarios, load_scenario
from mobile_agent.sim.servers.model_server import SHIPPED_SCRIPTS, load_scripts
from tests.cli.test_cli_run import CLI, _cli, _env, _ports

FAMILIES = ("ui-venus-2", "autoglm")
# The scenarios send, order and pay on purpose; nobody is at the terminal to confirm, so exactly those are allowed.
ALLOW = ["send@com.tencent.mm", "order@com.sankuai.meituan", "pay@com.sankuai.meituan"]
SCRIPTED = sorted({s.scenario for s in load_scripts([SHIPPED_SCRIPTS]) if s.scenario} & set(list_scenarios()))


def _stop(*procs: subprocess.Popen) -> None:
    for proc in procs:
        proc.send_signal(signal.SIGINT)
    for proc in procs:
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """One `sim model` process per family for the whole module."""
    tmp = tmp_path_factory.mktemp("models")
    procs, urls = [], {}
    try:
        for family in FAMILIES:
            port = free_port()
            proc = subprocess.Popen(
                [*CLI, "sim", "model", "--port", str(port), "--family", family],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=tmp,
                env=_env(tmp),
            )
            procs.append(proc)
            assert "http://127.0.0.1" in proc.stdout.readline(), proc.stderr.read()
            urls[family] = f"http://127.0.0.1:{port}/v1"
        yield urls
    finally:
        _stop(*procs)


@pytest.mark.parametrize("scenario", SCRIPTED)
def test_run_completes_the_scenario_against_separate_processes(scenario, models, tmp_path):
    spec = load_scenario(scenario)
    adb_port, base_port = _ports(len(FAMILIES))
    phones = subprocess.Popen(
        [
            *CLI,
            "sim",
            "up",
            "--phones",
            str(len(FAMILIES)),
            "--adb-port",
            str(adb_port),
            "--base-port",
            str(base_port),
            "--scenario",
            scenario,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
    )
    try:
        serials = [phones.stdout.readline().strip() for _ in FAMILIES]
        assert all(serials), phones.stderr.read()
        for family, serial in zip(FAMILIES, serials, strict=True):
            allow = [arg for rule in ALLOW for arg in ("--allow", rule)]
            result = _cli(
                [
                    "run",
                    spec.task,
                    "--device",
                    serial,
                    "--adb",
                    f"127.0.0.1:{adb_port}",
                    "--base-url",
                    models[family],
                    "--family",
                    family,
                    "--model",
                    family,
                    "--non-interactive",
                    *allow,
                ],
                tmp_path,
            )
            out = result.stdout + result.stderr
            assert f"outcome: {spec.expect_outcome}" in result.stdout, out
            assert result.returncode == (0 if spec.expect_outcome in ("finished", "answered") else 1), out
            assert "Traceback" not in out
            assert re.search(r"\(episode [0-9a-f]+\)", result.stdout)
    finally:
        _stop(phones)
