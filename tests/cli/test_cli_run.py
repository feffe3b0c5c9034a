"""The commands as a user runs them: separate processes for the phones, the model and the agent."""

from __future__ import annotations

import re
import time

import pytest

from mobile_agent.sim.farm import free_port
from tests.cli.conftest import finished, home_env, listening


def _cli(args, tmp_path, timeout=120, **kw):
    return finished(args, tmp_path, home_env(tmp_path), timeout, **kw)


def _model_args(p: dict[str, str]) -> list[str]:
    """The phone's adb server and the scripted autoglm endpoint of `sim_processes`."""
    return ["--adb", p["adb"], "--base-url", p["base_url"], "--family", "autoglm", "--model", "autoglm"]


@pytest.fixture
def sim_processes(background):
    """`mobile-agent sim up` and `mobile-agent sim model` as background processes; stopped at teardown."""
    phones, base_url = background.phones_and_model(1, scenario="wechat_send", family="autoglm")
    return {"adb": phones.adb, "serial": phones.serials[0], "base_url": base_url}


def test_run_against_separate_sim_processes(sim_processes, tmp_path):
    p = sim_processes
    result = _cli(
        [
            "run",
            "给张三发微信说晚上好",
            *_model_args(p),
            "--non-interactive",
            "--allow",
            "send@com.tencent.mm",
        ],
        tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "outcome: finished" in result.stdout
    assert (tmp_path / "replays" / "mobile_agent.db").exists()

    episode_id = re.search(r"\(episode ([0-9a-f]+)\)", result.stdout).group(1)
    listed = _cli(["episodes"], tmp_path)
    assert listed.returncode == 0 and "给张三发微信说晚上好" in listed.stdout and episode_id in listed.stdout
    shown = _cli(["show", episode_id[:6]], tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "launch" in shown.stdout and "finish" in shown.stdout

    doctor = _cli(["doctor", *_model_args(p)], tmp_path)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "✗" not in doctor.stdout


def test_run_with_several_phones_and_no_device_asks_to_choose(background, tmp_path):
    phones = background.phones(2)
    result = _cli(["run", "打开设置", "--adb", phones.adb, "--base-url", "http://127.0.0.1:9/v1"], tmp_path)
    assert result.returncode == 2
    assert "2 phones are attached" in result.stderr and "--device" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "args, expected",
    [
        (["run", "x", "--adb", "nonsense:port"], "bad adb server address"),
        (["run", "x", "--max-steps", "0"], "max-steps"),
        (["run", "x", "--family", "gpt-9", "--adb", "127.0.0.1:9"], "model family"),
        (["show", "doesnotexist"], "episode"),
        (["sim", "up", "--profile", "warp"], "profile"),
        (["demo", "--scenario", "no_such_scenario"], "scenario"),
        (["frobnicate"], "No such command"),
    ],
)
def test_user_errors_are_one_line_with_exit_2(args, expected, tmp_path):
    result = _cli(args, tmp_path, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert expected.lower() in result.stderr.lower()
    assert result.stderr.strip().splitlines()[0].startswith("error:")


def test_unreachable_adb_server_is_a_clear_error(tmp_path):
    port = free_port()
    default_server_before = listening(5037)
    result = _cli(["run", "打开设置", "--adb", f"127.0.0.1:{port}"], tmp_path, timeout=60)
    assert result.returncode == 2
    assert "adb server" in result.stderr and "hint" in result.stderr
    assert "Traceback" not in result.stderr
    # adbutils would start a server on 5037 when the one asked for is down; we must not.
    assert listening(5037) == default_server_before
    assert not listening(port)


def test_demo_from_a_clean_directory(tmp_path):
    started = time.monotonic()
    result = _cli(["demo"], tmp_path, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "outcome: finished" in result.stdout
    assert "simulated phone's check: ok" in result.stdout
    assert time.monotonic() - started < 180


def test_unattended_send_pauses_and_resume_continues_the_same_episode(sim_processes, tmp_path):
    p = sim_processes
    paused = _cli(["run", "给张三发微信说晚上好", *_model_args(p), "--non-interactive"], tmp_path)
    assert paused.returncode == 1, paused.stdout + paused.stderr
    assert "outcome: needs_user" in paused.stdout and "SEND" in paused.stdout
    episode_id = re.search(r"\(episode ([0-9a-f]+)\)", paused.stdout).group(1)

    resumed = _cli(["resume", episode_id[:8], "--reply", "yes", "--non-interactive"], tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "finished" in resumed.stdout and episode_id in resumed.stdout

    shown = _cli(["show", episode_id], tmp_path)
    assert "human" in shown.stdout  # the approved send is recorded as the person's step
    again = _cli(["resume", episode_id, "--reply", "yes", "--non-interactive"], tmp_path)
    assert again.returncode == 2 and "Traceback" not in again.stderr


def test_a_run_that_pauses_says_until_when_its_phone_is_booked_and_how_to_free_it(sim_processes, tmp_path):
    """Standard input is not a terminal: the send pauses; `run` says at once and at the end that the phone is
    booked, until when and the command that frees it; `inbox --json` says it is held, and no longer once freed."""
    import json

    p = sim_processes
    paused = _cli(["run", "给张三发微信说晚上好", *_model_args(p)], tmp_path)
    assert paused.returncode == 1, paused.stdout + paused.stderr
    err = " ".join(paused.stderr.split())
    assert re.search(r"keeps its phone booked until about \d\d:\d\d:\d\d UTC", err), err
    assert "`mobile-agent inbox release EPISODE` frees it" in err
    episode_id = re.search(r"\(episode ([0-9a-f]+)\)", paused.stdout).group(1)
    out = " ".join(paused.stdout.split())
    booked = re.search(rf"phone (\S+) is booked for episode {episode_id} until (\S+ \S+) UTC", out)
    assert booked and booked.group(1) == p["serial"], out
    assert f"free it now with: mobile-agent inbox release {episode_id}" in out

    [waiting] = json.loads(_cli(["inbox", "--json"], tmp_path).stdout)
    assert waiting["episode"] == episode_id and waiting["held"] is True
    assert waiting["held_until"].replace("T", " ").startswith(booked.group(2))

    freed = _cli(["inbox", "release", episode_id[:8]], tmp_path)
    assert freed.returncode == 0, freed.stdout + freed.stderr
    assert f"{episode_id}: phone {p['serial']} freed" in freed.stdout
    [waiting] = json.loads(_cli(["inbox", "--json"], tmp_path).stdout)
    assert waiting["held"] is False and waiting["held_until"] is None  # still answerable, no longer booked
    again = _cli(["inbox", "release", "nosuch"], tmp_path)
    assert again.returncode == 2 and "Traceback" not in again.stderr


def test_the_inbox_screenshot_marks_where_the_proposed_tap_would_land(sim_processes, tmp_path):
    """The console's picture of a paused send has the proposed tap drawn where it would land on the phone."""
    import io

    from PIL import Image

    from mobile_agent.console.app import BackgroundConsole
    from mobile_agent.farm.inbox import list_waiting
    from mobile_agent.store.store import TrajectoryStore
    from tests.unit.console.test_console_http import Client

    p = sim_processes
    paused = _cli(["run", "给张三发微信说晚上好", *_model_args(p), "--non-interactive"], tmp_path)
    assert paused.returncode == 1, paused.stdout + paused.stderr
    url = re.search(r"trajectory: (\S+) \(screenshots under", paused.stdout).group(1)
    with TrajectoryStore.open(url) as store:
        [question] = list_waiting(store)
        tap = question.action["point"]
        raw = Image.open(question.screenshot).convert("RGB")
        step = store.step(question.episode_id, question.step_index)
        device_width = step.screen.width  # the phone's pixels, which the action's point is in
        with BackgroundConsole(store, user="tester") as console:
            client = Client(console)
            client.login()
            response, body = client.request("GET", f"/questions/{question.episode_id}.jpg?w=1080")
    assert response.status == 200
    shot = Image.open(io.BytesIO(body)).convert("RGB")
    scale = shot.width / device_width
    x, y = round(tap[0] * scale), round(tap[1] * scale)
    ring = [
        (x + dx, y + dy)
        for dx in range(-40, 41, 2)
        for dy in range(-40, 41, 2)
        if 0 <= x + dx < shot.width and 0 <= y + dy < shot.height
    ]
    red = [xy for xy in ring if _is_mark(shot.getpixel(xy))]
    assert len(red) >= 20, (tap, shot.size, raw.size)  # the ring around the tap is drawn where the tap lands
    far = [
        (dx, dy)
        for dx in range(0, shot.width, 20)
        for dy in range(0, shot.height, 20)
        if abs(dx - x) > 120 or abs(dy - y) > 120
    ]
    assert sum(_is_mark(shot.getpixel(xy)) for xy in far) < len(far) // 50  # and not elsewhere


def _is_mark(rgb: tuple[int, int, int]) -> bool:
    """The red of report/draw.py's marks (255, 45, 85), after JPEG."""
    r, g, b = rgb
    return r > 200 and g < 110 and b < 140
