"""The user's habits, as commands in separate processes: adb's own variables pick the phone and the server,
`mobile-agent adb` is the adb that ships with the wheel, --json for scripts, task files checked before any phone,
and a scripted judge on the command line for `verify --judge`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mobile_agent.model.families import FAMILIES
from mobile_agent.sim.farm import free_port
from tests.cli.conftest import finished, listening

CLEARED = (
    "MOBILE_AGENT_DB",
    "MOBILE_AGENT_ADB",
    "MOBILE_AGENT_BASE_URL",
    "MOBILE_AGENT_MODEL",
    "MOBILE_AGENT_FAMILY",
    "MOBILE_AGENT_CONFIG",
    "ANDROID_SERIAL",
    "ANDROID_ADB_SERVER_PORT",
    "ADB_SERVER_SOCKET",
)


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CLEARED}
    env.update(COLUMNS="200", HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / ".config"), **extra)
    return env


def _cli(args, tmp_path, timeout=120, **extra):
    return finished(args, tmp_path, _env(tmp_path, **extra), timeout)


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """The background commands run in the same cleared environment as `_cli`'s."""
    return _env(tmp_path)


@pytest.fixture
def three_phones(background):
    """`sim up --phones 3` and `sim model` as background processes, as a user starts them."""
    phones, base_url = background.phones_and_model(3, scenario="wechat_send", family="autoglm")
    return {"adb_port": phones.adb_port, "serials": phones.serials, "base_url": base_url}


def test_version_prints_the_package_version(tmp_path) -> None:
    from importlib.metadata import version

    result = _cli(["--version"], tmp_path)
    assert result.returncode == 0 and result.stdout.strip() == f"mobile-agent {version('mobile-agent')}"


def test_android_serial_and_the_adb_port_variable_choose_like_adb(three_phones, tmp_path) -> None:
    p = three_phones
    chosen = p["serials"][1]
    env = {
        "ANDROID_SERIAL": chosen,
        "ANDROID_ADB_SERVER_PORT": str(p["adb_port"]),
        "MOBILE_AGENT_BASE_URL": p["base_url"],
        "MOBILE_AGENT_MODEL": "autoglm",
        "MOBILE_AGENT_FAMILY": "autoglm",
    }
    listed = _cli(
        ["adb", "devices"], tmp_path, **env
    )  # the wheel's adb, against the server the variable names
    assert listed.returncode == 0, listed.stderr
    assert all(serial in listed.stdout for serial in p["serials"])

    run = _cli(
        ["run", "给张三发微信说晚上好", "--non-interactive", "--allow", "send@com.tencent.mm", "--json"],
        tmp_path,
        **env,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(run.stdout)
    assert result["device"] == chosen and result["outcome"] == "finished" and result["steps"] >= 1
    assert {"episode_id", "answer", "store"} <= set(result) and "mobile_agent.db" in result["store"]

    episodes = json.loads(_cli(["episodes", "--json"], tmp_path).stdout)
    [listed_episode] = [e for e in episodes["episodes"] if e["episode_id"] == result["episode_id"]]
    assert listed_episode["device"] == chosen and listed_episode["outcome"] == "finished"

    shown = _cli(["show", result["episode_id"][:6], "--json"], tmp_path)
    assert shown.returncode == 0, shown.stderr
    detail = json.loads(shown.stdout)
    assert detail["episode_id"] == result["episode_id"] and detail["steps"]
    screenshots = [s["screenshot"] for s in detail["steps"] if s["screenshot"]]
    assert screenshots and all(Path(path).is_absolute() and Path(path).is_file() for path in screenshots)
    table = _cli(["show", result["episode_id"]], tmp_path)  # the table prints whole paths too
    assert all(path in table.stdout.replace("\n", "") for path in screenshots)

    plain = _cli(
        ["run", "给张三发微信说晚上好", "--non-interactive", "--allow", "send@com.tencent.mm"],
        tmp_path,
        **env,
    )
    assert "trajectory: " in plain.stdout and "mobile-agent show" in plain.stdout


def test_adb_never_starts_a_server_on_a_port_nobody_named(tmp_path) -> None:
    port = free_port()
    result = _cli(["adb", "-P", str(port), "devices"], tmp_path, timeout=60)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error:") and f"mobile-agent adb -P {port} start-server" in result.stderr
    assert not listening(port)


def test_tasks_check_names_the_line_and_the_valid_families(tmp_path) -> None:
    bad = tmp_path / "tasks.yaml"
    bad.write_text(
        "tasks:\n  - 打开设置\n  - task: Turn off Wi-Fi\n    family: ui-tars-1.5\n", encoding="utf-8"
    )
    result = _cli(["tasks", "check", str(bad)], tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{bad}:4: family: unknown model family 'ui-tars-1.5'" in result.stderr
    assert all(name in result.stderr for name in FAMILIES)
    shipped = Path(__file__).resolve().parents[2] / "examples" / "tasks.yaml"
    ok = _cli(["tasks", "check", str(shipped), "--json"], tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["ok"] is True


def test_a_bad_task_file_never_reaches_the_farm(tmp_path) -> None:
    bad = tmp_path / "tasks.yaml"
    bad.write_text("- task: Turn off Wi-Fi\n  family: ui-tars-1.5\n", encoding="utf-8")
    result = _cli(["submit", str(bad), "--db", f"sqlite:///{tmp_path / 'q.db'}"], tmp_path)
    assert result.returncode == 2 and "tasks.yaml:2" in result.stderr and "Traceback" not in result.stderr


def test_sim_judge_answers_verify_judge(three_phones, background, tmp_path) -> None:
    p = three_phones
    env = {"ANDROID_ADB_SERVER_PORT": str(p["adb_port"]), "ANDROID_SERIAL": p["serials"][0]}
    run = _cli(
        [
            "run",
            "给张三发微信说晚上好",
            "--base-url",
            p["base_url"],
            "--family",
            "autoglm",
            "--model",
            "autoglm",
        ]
        + ["--non-interactive", "--allow", "send@com.tencent.mm", "--json"],
        tmp_path,
        **env,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    episode_id = json.loads(run.stdout)["episode_id"]
    judge_port = free_port()
    judge = background.start("sim", "judge", "--port", str(judge_port), "--verdict", "partial")
    background.banner(judge, f"http://127.0.0.1:{judge_port}/v1")
    verified = _cli(
        ["verify", episode_id, "--judge", f"http://127.0.0.1:{judge_port}/v1", "--json"], tmp_path
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    [verdict] = json.loads(verified.stdout)["episodes"]
    assert verdict["verdict"] == "partial" and verdict["success"] is False
