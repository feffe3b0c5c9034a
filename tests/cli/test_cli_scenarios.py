"""Every shipped scenario, as a user would run it: `mobile-agent sim up` and `mobile-agent sim model` as separate
processes, and `mobile-agent run` against them, with the ui-venus-2 and autoglm families."""

from __future__ import annotations

import re

import pytest

from mobile_agent.sim.scenario import list_scenarios, load_scenario
from mobile_agent.sim.servers.model_server import SHIPPED_SCRIPTS, load_scripts
from tests.cli.test_cli_run import _cli

FAMILIES = ("ui-venus-2", "autoglm")
# The scenarios send, order and pay on purpose; nobody is at the terminal to confirm, so exactly those are allowed.
ALLOW = ["send@com.tencent.mm", "order@com.sankuai.meituan", "pay@com.sankuai.meituan"]
SCRIPTED = sorted({s.scenario for s in load_scripts([SHIPPED_SCRIPTS]) if s.scenario} & set(list_scenarios()))


@pytest.fixture(scope="module")
def models(module_background):
    """One `sim model` process per family for the whole module."""
    return {family: module_background.model(family) for family in FAMILIES}


@pytest.mark.parametrize("scenario", SCRIPTED)
def test_run_completes_the_scenario_against_separate_processes(scenario, models, background, tmp_path):
    spec = load_scenario(scenario)
    phones = background.phones(len(FAMILIES), scenario=scenario)
    for family, serial in zip(FAMILIES, phones.serials, strict=True):
        allow = [arg for rule in ALLOW for arg in ("--allow", rule)]
        result = _cli(
            [
                "run",
                spec.task,
                "--device",
                serial,
                "--adb",
                phones.adb,
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
