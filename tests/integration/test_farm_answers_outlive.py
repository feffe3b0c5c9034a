"""Questions outlive workers (issue 23 item 2): a batch is killed with -9 while two WeChat sends wait for a person
(one phone held for the answer, one not). The question, its answer and the hold are store state, so a new
`batch --resume` continues every answered question, whichever comes first, the answer or the resume. Proven on
the simulated phones: each task's message goes out exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from mobile_agent.farm.inbox import answer, list_waiting
from mobile_agent.sim.servers.model_server import SHIPPED_SCRIPTS, SimModelServer
from mobile_agent.store import answers as answer_db
from mobile_agent.store import queue_status as qs
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.store import TrajectoryStore
from tests.integration.inventory import inventory_file

pytestmark = pytest.mark.slow

SEND = "给张三发微信说晚上好"


def _batch(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "mobile_agent.cli.app", "batch", *args, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def _sent(farm) -> int:
    return sum(len(phone.state.messages_sent) for phone in farm.phones.values())


@pytest.mark.parametrize("first", ["resume", "answer"])
def test_answered_questions_of_a_killed_batch_continue(sim_farm, tmp_path: Path, first: str) -> None:
    farm = sim_farm(2, scenario="wechat_send")
    devices = inventory_file(tmp_path / "devices.yaml", farm.adb_port, farm.serials)
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text(
        yaml.safe_dump({"tasks": [{"task": SEND, "app": "微信", "repeats": 2}]}, allow_unicode=True), "utf-8"
    )
    db = f"sqlite:///{tmp_path / 'farm.db'}"
    with (
        SimModelServer(family="ui-venus-2", scripts=[SHIPPED_SCRIPTS / "wechat_send.yaml"]) as model,
        TrajectoryStore.open(db) as store,
    ):
        common = ["--db", db, "--devices", str(devices), "--base-url", model.base_url, "--hold", "600"]
        victim = _batch(str(tasks), *common)
        try:
            deadline = time.monotonic() + 90
            while len(answer_db.open_windows(store)) < 2:  # both sends wait for a person
                assert victim.poll() is None, victim.communicate()[1][-3000:]
                assert time.monotonic() < deadline, "the sends never came to wait for a person"
                time.sleep(0.2)
            held = [w for w in answer_db.open_windows(store) if w.held_by]
            assert len(held) == 1  # one phone kept for the answer, the other one free
            victim.send_signal(signal.SIGKILL)
            victim.wait(10)
        finally:
            if victim.poll() is None:
                victim.kill()
                victim.wait()
        run_id = store.list_runs(limit=1)[0].id
        waiting = [q.episode_id for q in list_waiting(store, run_ids=[run_id])]
        assert len(waiting) == 2 and _sent(farm) == 0

        resume = None
        if first == "resume":
            resume = _batch("--resume", run_id, *common)
            time.sleep(3)  # the resumed batch is up and waiting before anyone answers
            assert resume.poll() is None
        answer(store, waiting, "yes", who="tester")
        if resume is None:
            resume = _batch("--resume", run_id, *common)
        try:
            out, err = resume.communicate(timeout=90)  # well before the hold of 600 s could lapse
        finally:
            if resume.poll() is None:
                resume.kill()
                resume.wait()
        assert resume.returncode == 0, (out + err)[-3000:]
        assert "Traceback" not in err, err[-3000:]
        summary = json.loads(out)
        assert summary["waiting"] == [] and summary["expired"] == []

        assert _sent(farm) == 2  # every answered question continued, each message sent once
        for episode_id in waiting:
            episode = store.episode(episode_id)
            assert episode.status is EpisodeStatus.ENDED and episode.outcome == "finished", episode
        assert {t.outcome for t in qs.list_tasks(store, run_id)} == {"finished"}
