"""Take-over from the inbox on the live page, as part of an episode: a farm worker's episode meets a slider captcha
and pauses with the phone held; in Chromium the person opens the question's "take over" link, takes control,
drags the slider on the live screen, and hands back; the worker continues the same episode on the screen left
behind, records the person's step (with what they did, which the model is told) and finishes it.

Real adb server, uiautomator2 server, simulated phone, model endpoint and worker process; no mocks.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from mobile_agent.actions import Action
from mobile_agent.console.app import BackgroundConsole
from mobile_agent.farm.inbox import list_waiting
from mobile_agent.sim.scenario import make_scenario
from mobile_agent.sim.servers.model_server import Script, SimModelServer, Turn
from mobile_agent.sim.world.popups import CAPTCHA_TARGET
from mobile_agent.store.records import ActionSource
from mobile_agent.store.store import TrajectoryStore
from tests.integration.chromium import CHROMIUM, CHROMIUM_ARGS, sync_api, wait_until
from tests.integration.inventory import inventory_file

pytestmark = pytest.mark.slow

TASK = "过了验证再看张三的消息"
SCRIPT = Script(
    TASK, (Turn(Action.launch("微信")), Turn(Action.tap(481, 122)), Turn(Action.finish("看完了")))
)


def submit(db: str, tasks: Path) -> str:
    import typer

    from mobile_agent.cli.farm_batch import submit_command

    app = typer.Typer()
    app.command("submit")(submit_command)
    app.command("other")(lambda: None)
    result = CliRunner().invoke(app, ["submit", str(tasks), "--db", db, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["run_id"]


def slider(phone) -> tuple[int, int, int]:
    xml = phone.hierarchy_xml()

    def bounds(rid: str) -> tuple[int, ...]:
        node = re.search(rf'resource-id="[^"]*{rid}"[^>]*bounds="\[(\d+),(\d+)\]\[(\d+),(\d+)\]"', xml)
        assert node, f"no {rid} on the screen"
        return tuple(map(int, node.groups()))

    left, top, right, bottom = bounds("captcha_slider")
    t_left, _, t_right, _ = bounds("captcha_track")
    return (left + right) // 2, (top + bottom) // 2, round((t_right - t_left) * CAPTCHA_TARGET)


def test_take_over_a_paused_episode_and_hand_back(sim_farm, tmp_path: Path) -> None:
    farm = sim_farm(1)
    serial = farm.serials[0]
    phone = farm.phones[serial]
    phone.apply_scenario(
        make_scenario(
            name="captcha_wall", task=TASK, popups={"com.tencent.mm": ["captcha"]}, check=["screen == chat"]
        )
    )
    devices = inventory_file(tmp_path / "devices.yaml", farm.adb_port, [serial])
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text(
        yaml.safe_dump({"tasks": [{"task": TASK, "max_steps": 10}]}, allow_unicode=True), "utf-8"
    )
    db = f"sqlite:///{tmp_path / 'farm.db'}"
    run_id = submit(db, tasks)
    with (
        SimModelServer(family="ui-venus-2", scripts=[SCRIPT]) as model,
        TrajectoryStore.open(db) as store,
        BackgroundConsole(store, user="tester") as console,
        sync_api.sync_playwright() as playwright,
    ):
        worker = subprocess.Popen(
            [sys.executable, "-m", "mobile_agent.cli.app", "worker", "--db", db, "--devices", str(devices),
             "--base-url", model.base_url, "--run", run_id, "--hold", "120", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "MOBILE_AGENT_DB": db},
        )  # fmt: skip
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            # the worker keeps a window open for the answer (--hold): it continues the episode once answered
            wait_until(lambda: any(q.answer_by for q in list_waiting(store)), timeout=90, what="the captcha")
            (question,) = list_waiting(store)
            assert question.kind == "captcha" and phone.screen()[1] == "popup:captcha"

            page = browser.new_page(viewport={"width": 1200, "height": 1000})
            page.goto(console.url)
            page.goto(f"{console.base}/inbox")
            page.locator(f"#q-{question.episode_id} a.take-over").click()
            page.wait_for_function("() => window.__liveFrames && window.__liveFrames.length >= 1")
            assert question.episode_id in page.locator("#takeover").inner_text()
            page.locator("#take").click()
            page.wait_for_function("() => document.querySelector('#control-state').dataset.control === 'you'")

            x, y, distance = slider(phone)
            box = page.locator("#screen").bounding_box()
            width, height = phone.window_size()

            def on_page(px: int, py: int) -> tuple[float, float]:
                return box["x"] + box["width"] * px / width, box["y"] + box["height"] * py / height

            page.mouse.move(*on_page(x, y))
            page.mouse.down()
            page.mouse.move(*on_page(x + distance, y), steps=8)
            page.mouse.up()
            wait_until(lambda: phone.screen()[1] != "popup:captcha", what="the captcha solved from the page")

            page.locator("#hand-back").click()
            out, err = worker.communicate(timeout=120)
        finally:
            browser.close()
            if worker.poll() is None:
                worker.kill()
                worker.wait(10)
        assert worker.returncode == 0, err.decode()[-2000:]

        episode = store.episode(question.episode_id)
        assert episode.outcome == "finished", episode.outcome_detail
        assert phone.screen() == ("com.tencent.mm", "chat")
        steps = store.steps(episode.id)
        human = [s for s in steps if s.action_source is ActionSource.HUMAN]
        assert len(human) == 1 and "done on the phone from the console by tester" in human[0].thought
        assert "swipe" in human[0].thought
        assert steps[-1].action.kind.value == "finish"
        session = next(e for e in store.list_episodes(device=serial, limit=None) if e.meta.get("live"))
        assert session.meta["live"]["takeover"] == episode.id
        assert [s.action.kind.value for s in store.steps(session.id)] == ["swipe"]
        assert "handed back" in store.episode(session.id).outcome_detail

        # the person's step is in show and in the report, like any step; so is the live session's swipe
        def cli(*args: str) -> str:
            done = subprocess.run(
                [sys.executable, "-m", "mobile_agent.cli.app", *args, "--db", db],
                capture_output=True,
                text=True,
                timeout=120,
                env={**os.environ, "MOBILE_AGENT_DB": db},
            )
            assert done.returncode == 0, done.stderr[-2000:]
            return done.stdout

        shown = json.loads(cli("show", episode.id, "--json"))
        assert "done on the phone from the console by tester" in json.dumps(shown, ensure_ascii=False)
        assert "human" in json.dumps(shown)
        assert "swipe" in cli("show", session.id)
        written = tmp_path / "report.html"
        cli("report", episode.id, "-o", str(written), "-q")
        assert "done on the phone from the console by tester" in written.read_text(encoding="utf-8")
