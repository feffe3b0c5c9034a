"""Retries ask only about what is uncertain (issue 23 item 3). A batch dies by SIGKILL in the middle of a WeChat
send (``--allow send@com.tencent.mm``), then `batch --resume` runs the task again:

- killed right after deciding a harmless tap (the chat row; its effect unknown): the retry asks nothing and sends;
- killed right after the send tap reached the phone (recorded as intent: consequential, effect unknown): the
  task's check reads the phone's state, sees the message sent and ends the task without doing anything again.

Either way the simulated phone has sent exactly one message and no task waits for a person."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mobile_agent.sim.servers.model_server import SHIPPED_SCRIPTS, SimModelServer
from mobile_agent.store import queue_status as qs
from mobile_agent.store.owners import INTENT
from mobile_agent.store.store import TrajectoryStore
from tests.integration.inventory import inventory_file

pytestmark = pytest.mark.slow

SEND = "给张三发微信说晚上好"
CHECK = {"state": ["messages_sent contains {contact: 张三, text: 晚上好}"]}


def _batch(args: list[str], crash_at: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "MOBILE_AGENT_TEST_CRASH_AT"}
    if crash_at:
        env["MOBILE_AGENT_TEST_CRASH_AT"] = crash_at
    return subprocess.run(
        [sys.executable, "-m", "mobile_agent.cli.app", "batch", *args, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize(
    ("crash_at", "kind"),
    [("after_intent:1", None), ("after_act:4", "send")],
    ids=["harmless-tap", "send-that-went-out"],
)
def test_a_retry_asks_only_about_an_uncertain_consequential_action(
    sim_farm, tmp_path: Path, crash_at: str, kind: str | None
) -> None:
    farm = sim_farm(1, scenario="wechat_send")
    devices = inventory_file(tmp_path / "devices.yaml", farm.adb_port, farm.serials[:1])
    tasks = tmp_path / "tasks.yaml"
    task = {"task": SEND, "app": "微信", "reset": "force-stop", "check": CHECK}
    tasks.write_text(yaml.safe_dump({"tasks": [task]}, allow_unicode=True), "utf-8")
    db = f"sqlite:///{tmp_path / 'farm.db'}"
    (phone,) = farm.phones.values()
    with SimModelServer(family="ui-venus-2", scripts=[SHIPPED_SCRIPTS / "wechat_send.yaml"]) as model:
        common = ["--db", db, "--devices", str(devices), "--base-url", model.base_url]
        common += ["--allow", "send@com.tencent.mm", "--hold", "5"]
        killed = _batch([str(tasks), *common], crash_at=crash_at)
        assert killed.returncode == -9, killed.stdout + killed.stderr
        assert len(phone.state.messages_sent) == (1 if kind else 0)

        with TrajectoryStore.open(db) as store:
            run_id = store.list_runs(limit=1)[0].id
            (first,) = store.list_episodes(run_id=run_id, limit=None)
            last = store.steps(first.id)[-1]
            assert last.status == INTENT  # its effect is unknown

        resumed = _batch(["--resume", run_id, *common])
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert "Traceback" not in resumed.stderr
        summary = json.loads(resumed.stdout)
        assert summary["waiting"] == [] and summary["expired"] == []  # nobody was asked
        assert summary["by_outcome"] == {"finished": 1}
        assert len(phone.state.messages_sent) == 1  # sent once, never twice

        with TrajectoryStore.open(db) as store:
            assert qs.run_counts(store, run_id) == qs.RunCounts(done=1)
            episodes = store.list_episodes(run_id=run_id, limit=None)
            retry = next(e for e in episodes if e.id != first.id)
            if kind is None:
                assert retry.step_count > 0  # it did the task again, without asking
            else:
                assert retry.step_count == 0 and retry.meta.get("resolved_from_phone_state")
