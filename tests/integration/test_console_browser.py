"""The web console in headless Chromium while a batch runs on simulated phones: the run's progress moves on the
page, a paused payment shows in the inbox with its screenshot, approving it finishes the episode with the payment
made (the phone's state proves it), denying another ends it blocked with nothing paid, a request without the token
gets 401, and a model thought containing <script> renders as text.

Skips (with the reason) when Debian's chromium or the playwright package is missing; no browser is downloaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from mobile_agent.console.app import BackgroundConsole
from mobile_agent.farm.inbox import list_waiting
from mobile_agent.sim.servers.model_server import SHIPPED_SCRIPTS, SimModelServer
from mobile_agent.store import answers as answer_db
from mobile_agent.store import queue_status as qs
from mobile_agent.store.store import TrajectoryStore
from tests.integration.chromium import CHROMIUM, CHROMIUM_ARGS, sync_api, wait_until
from tests.integration.inventory import inventory_file

pytestmark = pytest.mark.slow

ORDER = "在美团点一份黄焖鸡米饭"
MEITUAN = "com.sankuai.meituan"
EVIL = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'
DRILL = {"task": "farm drill", "turns": [{"think": EVIL, "action": {"kind": "finish", "text": "done"}}]}


def submit(db: str, tasks: Path) -> str:
    import typer

    from mobile_agent.cli.farm_batch import submit_command

    app = typer.Typer()
    app.command("submit")(submit_command)
    app.command("other")(lambda: None)
    result = CliRunner().invoke(
        app, ["submit", str(tasks), "--db", db, "--allow", f"order@{MEITUAN}", "--json"]
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["run_id"]


def test_a_batch_with_the_console_open(sim_farm, tmp_path: Path) -> None:
    farm = sim_farm(3, scenario="meituan_order")
    devices = inventory_file(tmp_path / "devices.yaml", farm.adb_port, farm.serials)
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text(
        yaml.safe_dump(
            {
                "defaults": {"max_steps": 15},
                "tasks": [
                    {"task": ORDER, "app": "美团", "reset": "force-stop", "repeats": 2, "priority": 10},
                    {"task": "farm drill", "repeats": 4},
                ],
            },
            allow_unicode=True,
        ),
        encoding="utf-8",
    )
    (tmp_path / "drill.yaml").write_text(yaml.safe_dump(DRILL, allow_unicode=True), encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'farm.db'}"
    run_id = submit(db, tasks)
    requests: list[str] = []
    with (
        SimModelServer(
            family="ui-venus-2", scripts=[SHIPPED_SCRIPTS / "meituan_order.yaml", tmp_path / "drill.yaml"]
        ) as model,
        TrajectoryStore.open(db) as store,
        BackgroundConsole(store, user="tester") as console,
        sync_api.sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            anonymous = browser.new_context()
            denied = anonymous.request.get(f"{console.base}/runs/{run_id}")
            assert denied.status == 401
            assert anonymous.request.get(f"{console.base}/?token=not-it").status == 403
            anonymous.close()

            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("request", lambda r: requests.append(r.url))
            page.goto(console.url)
            page.goto(f"{console.base}/runs/{run_id}")
            assert page.locator("#progress-text").inner_text() == "0 of 6 tasks"

            worker = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "mobile_agent.cli.app",
                    "worker",
                    "--db",
                    db,
                    "--devices",
                    str(devices),
                    "--base-url",
                    model.base_url,
                    "--run",
                    run_id,
                    "--hold",
                    "120",
                    "--json",
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**os.environ, "MOBILE_AGENT_DB": db},
            )
            try:
                # the progress moves on the open page, pushed by server-sent events (no reload)
                page.wait_for_function(
                    "() => document.querySelector('#progress-text').textContent !== '0 of 6 tasks'",
                    timeout=90_000,
                )
                wait_until(
                    lambda: len([q for q in list_waiting(store) if q.answer_by]) == 2,
                    timeout=90,
                    what="two payments",
                )
                page.goto(f"{console.base}/inbox")
                page.wait_for_selector("article.question img")
                assert page.locator("article.question").count() == 2
                loaded = page.eval_on_selector_all(
                    "article.question img", "imgs => imgs.map(i => i.complete && i.naturalWidth > 0)"
                )
                assert loaded == [True, True]
                page.locator("article.question img").first.click()  # click-to-zoom
                assert page.locator("#zoom").is_visible()
                page.keyboard.press("Escape")

                waiting = list_waiting(store)
                held = next(q for q in waiting if q.held)
                other = next(q for q in waiting if q is not held)
                page.locator(f"#q-{held.episode_id} button.approve").click()
                page.wait_for_load_state("load")
                assert "answered" in page.locator("p.message").inner_text()
                page.locator(f"#q-{other.episode_id} button.deny").click()
                page.wait_for_load_state("load")

                # the episode continues on its phone; its page shows it moving to the end
                page.goto(f"{console.base}/episodes/{held.episode_id}")
                page.wait_for_function(
                    "() => document.querySelector('#outcome').textContent.startsWith('finished')",
                    timeout=90_000,
                )
                out, err = worker.communicate(timeout=120)
            finally:
                if worker.poll() is None:
                    worker.kill()
                    worker.wait(10)
            assert worker.returncode == 0, err.decode()[-2000:]

            # a model thought with <script> shows as text and runs nothing
            drill = next(e for e in store.list_episodes(run_id=run_id, limit=None) if e.task == "farm drill")
            page.goto(f"{console.base}/episodes/{drill.id}")
            assert EVIL in page.locator("div.thought").first.inner_text()
            assert page.evaluate("() => window.pwned === undefined")
        finally:
            browser.close()

        states = {s: farm.phones[s].state.as_dict() for s in farm.serials}
        paid = {s: [o for o in st["orders"] if o["paid"]] for s, st in states.items()}
        assert paid[held.phone] and [o["total"] for o in paid[held.phone]] == [
            25.0
        ]  # approved: the payment made
        assert paid[other.phone] == []  # denied: nothing paid
        assert store.episode(held.episode_id).outcome == "finished"
        assert store.episode(other.episode_id).outcome == "blocked"
        whos = {
            a.replied_by for e in (held, other) for a in answer_db.answers_of_episode(store, e.episode_id)
        }
        assert all(w.startswith("tester (console") for w in whos)
        assert qs.run_counts(store, run_id).open == 0
    assert {u.split("/")[2] for u in requests} == {f"127.0.0.1:{console.port}"}  # nothing fetched elsewhere
