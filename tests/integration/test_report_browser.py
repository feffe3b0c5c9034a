"""The HTML report of a run recorded through the real stack, opened in headless Chromium.

Skips (with the reason) when Debian's chromium or the playwright package is missing. Chromium is launched from
/usr/bin/chromium by playwright; no browser is downloaded.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mobile_agent.actions import Outcome
from mobile_agent.agent.config import AgentConfig
from mobile_agent.agent.loop import Agent
from mobile_agent.agent.runtime import load_registry
from mobile_agent.device.android import AndroidDevice
from mobile_agent.gate.policy import parse_policy
from mobile_agent.model.client import ModelClient
from mobile_agent.model.families import get_family
from mobile_agent.report.html import write_report
from mobile_agent.sim.farm import SimFarm
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store.store import TrajectoryStore

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
TASKS = [("wechat_send", "给张三发微信说晚上好"), ("settings_dark_mode", "打开手机的深色模式")]

if not CHROMIUM.is_file():
    pytest.skip("no Chromium at /usr/bin/chromium (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
)


@pytest.fixture(scope="module")
def recorded_run(adb_server, tmp_path_factory) -> tuple[str, str, int]:
    """A run of two episodes recorded by the agent on simulated phones. Returns (db url, run id, step count)."""
    folder: Path = tmp_path_factory.mktemp("report-store")
    url = f"sqlite:///{folder / 'store.db'}"
    registry = load_registry()
    with TrajectoryStore.open(url) as store, SimModelServer(family="ui-venus-2") as model:
        run = store.create_run("report-browser")
        for scenario, task in TASKS:
            with SimFarm(1, scenario=scenario, adb_port=adb_server.port) as farm:
                device = AndroidDevice(farm.serials[0], adb=f"127.0.0.1:{farm.adb_port}")
                with ModelClient([model.base_url], model.served_model) as client:
                    config = AgentConfig(safety=parse_policy(allow=["send@com.tencent.mm"]))
                    agent = Agent(
                        device, get_family("ui-venus-2"), client, store, registry=registry, config=config
                    )
                    result = agent.run(task, run_id=run.id)
            assert result.outcome == Outcome.FINISHED, result
        store.finish_run(run.id)
        steps = sum(len(store.steps(e.id)) for e in store.list_episodes(run_id=run.id, limit=None))
    return url, run.id, steps


def _launch(playwright):
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


def test_run_report_renders_every_step_in_chromium(recorded_run, tmp_path: Path) -> None:
    url, run_id, step_count = recorded_run
    with TrajectoryStore.open(url) as store:
        report = write_report(store, run=run_id, output=tmp_path / "run.html")
    html = report.read_text(encoding="utf-8")
    assert "<script" not in html and "http://" not in html and "https://" not in html
    requests: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = _launch(playwright)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("request", lambda request: requests.append(request.url))
            page.goto(report.as_uri())
            page.wait_for_load_state("load")
            steps = page.locator("article.step")
            assert steps.count() == step_count
            loaded = page.eval_on_selector_all(
                "article.step img", "imgs => imgs.map(i => i.complete && i.naturalWidth > 0)"
            )
            assert len(loaded) == step_count and all(loaded)
            assert page.locator("section.episode").count() == len(TASKS)
            assert page.locator("svg.chart").count() == 3
            summary = page.locator("p.summary").inner_text()
            assert "0 of 2 episodes verified complete" in summary
            assert "2 finished (unverified)" in summary
            page.locator("details summary").first.click()
            assert page.locator("details[open] pre").first.is_visible()
            shot = tmp_path / "run.png"
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert shot.stat().st_size > 10_000
    assert [r for r in requests if not r.startswith(("file:", "data:"))] == []
    keep = Path(__import__("os").environ.get("MOBILE_AGENT_KEEP_REPORT", ""))
    if keep.name:  # for looking at the rendering by eye: MOBILE_AGENT_KEEP_REPORT=/tmp/report.png
        shutil.copy(shot, keep)


def test_episode_report_renders_in_chromium(recorded_run, tmp_path: Path) -> None:
    url, run_id, _ = recorded_run
    with TrajectoryStore.open(url) as store:
        episode = store.list_episodes(run_id=run_id, limit=None)[0]
        expected = len(store.steps(episode.id))
        report = write_report(store, episode=episode.id[:6], output=tmp_path)
    assert report.name == f"report-episode-{episode.id}.html"
    with sync_api.sync_playwright() as playwright:
        browser = _launch(playwright)
        try:
            page = browser.new_page()
            page.goto(report.as_uri())
            assert page.locator("article.step").count() == expected
            assert page.locator("article.step .action").count() == expected
        finally:
            browser.close()
