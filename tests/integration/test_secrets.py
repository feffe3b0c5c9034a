"""API keys never leave the process: episodes run through the real stack (real adb server, simulated phones, the
OpenAI client against the simulated model and judge) with a key in every position — the Authorization header (from
the environment), ``?api_key=`` in the base URL, ``user:password`` in the URL — and against endpoints that echo the
Authorization header and the request line in their error bodies. Then the SQLite file, the store's text files,
the logs, an HTML report, an export and the output of ``run``, ``show``, ``episodes --json``-like views and
``verify`` are searched for every key."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

from mobile_agent.actions import Action
from mobile_agent.agent.runtime import run_task
from mobile_agent.gate.policy import parse_policy
from mobile_agent.report.export import ExportOptions, export_episodes
from mobile_agent.report.html import write_report
from mobile_agent.sim.servers.model_server import Script, SimModelServer, Turn
from mobile_agent.store.store import TrajectoryStore

CLI = [sys.executable, "-m", "mobile_agent.cli.app"]
HEADER_KEY = "sk-header-7f3a9c2e41d8b6"
QUERY_KEY = "sk-query-0b5d8e1f27c4a9"
URL_PASSWORD = "pw-url-93e1c7a5d2f8b4"
URL_USER = "user-tok-5e2a8c1d9f"
KEYS = (HEADER_KEY, QUERY_KEY, URL_PASSWORD, URL_USER)
POLICY = parse_policy(allow=["send@com.tencent.mm"])

GOOD = "秘密测试：打开微信"
REFUSED = "秘密测试：被拒绝"  # a 401 whose body echoes the key: not retried, the episode ends error:model
FLAKY = "秘密测试：一直出错"  # 500s whose bodies echo the key: retried, logged, then ModelUnavailable


def _scripts() -> list[Script]:
    launch = Turn(action=Action.launch("com.tencent.mm"), think="open WeChat")
    done = Turn(action=Action.finish("done"), think="done")
    return [
        Script(task=GOOD, turns=(Turn(http_error=503), launch, done)),
        Script(task=REFUSED, turns=(launch, Turn(http_error=401))),
        Script(task=FLAKY, turns=tuple(Turn(http_error=500) for _ in range(8))),
    ]


def _urls(base_url: str) -> list[str]:
    host = base_url.removeprefix("http://")
    return [
        base_url,
        f"{base_url}?api_key={QUERY_KEY}",
        f"http://{URL_USER}:{quote(URL_PASSWORD)}@{host}",
    ]


def _leaks(text: str) -> list[str]:
    return [key for key in KEYS if key in text or quote(key) in text]


def _scan_tree(root: Path) -> dict[str, list[str]]:
    found = {}
    for path in root.rglob("*"):
        if path.is_file():
            leaks = _leaks(path.read_bytes().decode("utf-8", "replace"))
            if leaks:
                found[str(path)] = leaks
    return found


@pytest.fixture
def env_key(monkeypatch):
    monkeypatch.setenv("MOBILE_AGENT_API_KEY", HEADER_KEY)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_keys_in_every_position_reach_no_store_log_report_export_or_output(
    sim_farm, tmp_path, env_key, caplog, capsys
):
    caplog.set_level(logging.DEBUG)
    root = tmp_path / "replays"
    farm = sim_farm(1, scenario="wechat_send")
    adb = f"127.0.0.1:{farm.adb_port}"
    with (
        SimModelServer(family="ui-venus-2", scripts=_scripts(), model_name="sim") as server,
        TrajectoryStore.open(root=root) as store,
    ):
        server.echo_auth = True
        outcomes = []
        for url in _urls(server.base_url):
            for task in (GOOD, REFUSED, FLAKY):
                server.reset()
                result = run_task(
                    task,
                    device=farm.serials[0],
                    adb=adb,
                    base_url=url,
                    model="sim",
                    store=store,
                    safety=POLICY,
                )
                outcomes.append((task, result.outcome))
        # the endpoint really echoed: its error bodies carried the Authorization header
        assert any(r.status == 401 for r in server.requests)
        report = write_report(
            store, episode=store.list_episodes(limit=None)[0].id, output=tmp_path / "report.html"
        )
        exported = export_episodes(
            store, store.list_episodes(limit=None), tmp_path / "export", ExportOptions()
        )
        episodes = store.list_episodes(limit=None)
        details = [e.outcome_detail or "" for e in episodes]
    assert ("秘密测试：打开微信", "finished") in outcomes
    assert any(o == "error:model" for t, o in outcomes if t == REFUSED), outcomes
    assert any(o.startswith("error:model") for t, o in outcomes if t == FLAKY), outcomes
    # the error details are kept, only the secret inside them is masked
    assert any("Authorization" in d and "***" in d for d in details), details
    assert {e.base_url for e in episodes} >= {f"{server.base_url}?api_key=***"}

    assert _scan_tree(root) == {}  # the SQLite file (and its WAL), screenshots, hierarchy files
    assert _leaks(Path(report).read_text(encoding="utf-8")) == []
    assert _scan_tree(exported.data_file.parent) == {}
    assert _leaks("\n".join(r.getMessage() for r in caplog.records)) == []
    out, err = capsys.readouterr()
    assert _leaks(out + err) == []


def test_cli_run_show_and_verify_print_no_key(sim_farm, tmp_path):
    """The commands as a user runs them, in processes of their own: run (with the key in the environment, the
    URL and its query), show, episodes, report, export and verify against an echoing judge."""
    farm = sim_farm(1, scenario="wechat_send")
    env = {**os.environ, "MOBILE_AGENT_API_KEY": HEADER_KEY, "MOBILE_AGENT_JUDGE_API_KEY": HEADER_KEY}
    env.pop("MOBILE_AGENT_DB", None)
    db = f"sqlite:///{tmp_path / 'replays' / 'mobile_agent.db'}"

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*CLI, *args],
            capture_output=True,
            text=True,
            timeout=180,
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
        )

    outputs = []
    with SimModelServer(family="ui-venus-2", scripts=_scripts(), model_name="sim") as server:
        server.echo_auth = True
        urls = _urls(server.base_url)
        for url, task in ((urls[1], GOOD), (urls[2], REFUSED), (urls[1], FLAKY)):
            server.reset()
            done = cli(
                "run",
                task,
                "--adb",
                f"127.0.0.1:{farm.adb_port}",
                "--device",
                farm.serials[0],
                "--base-url",
                url,
                "--model",
                "sim",
                "--db",
                db,
                "--non-interactive",
                "--allow",
                "send@com.tencent.mm",
            )
            outputs.append(done)
        assert outputs[0].returncode == 0, outputs[0].stdout + outputs[0].stderr  # ?api_key= in the URL works
        assert "Authorization" in outputs[1].stdout + outputs[1].stderr  # the echo is shown, masked
        with TrajectoryStore.open(db) as store:
            episode_ids = [e.id for e in store.list_episodes(limit=None)]
        for episode in episode_ids:
            outputs.append(cli("show", episode, "--db", db))
        outputs.append(cli("episodes", "--db", db))
        outputs.append(cli("report", episode_ids[0], "--db", db, "-o", str(tmp_path / "r.html")))
        outputs.append(cli("export", *episode_ids, "--db", db, "-f", "sharegpt", "-o", str(tmp_path / "ds")))
        outputs.append(cli("runs", "--db", db, "--json"))
        # the model server doubles as an echoing judge: asked for a model it does not serve, its 404 body
        # carries the judge's Authorization header and the request line
        server.reset()
        judge_url = f"{urls[2]}?api_key={QUERY_KEY}"
        for extra in ((), ("--json",)):
            outputs.append(
                cli(
                    "verify",
                    episode_ids[-1],
                    "--db",
                    db,
                    "--judge",
                    judge_url,
                    "--judge-model",
                    "nosuch",
                    *extra,
                )
            )
        judged = outputs[-2].stdout + outputs[-2].stderr
        assert "Authorization" in judged and "***" in judged, judged  # the judge echoed; the key is masked
    for done in outputs:
        assert _leaks(done.stdout + done.stderr) == [], (done.args, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr, done.stderr
    assert _scan_tree(tmp_path) == {}
