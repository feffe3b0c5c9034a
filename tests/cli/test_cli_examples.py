"""The shipped example runs end to end as its header says: `sim up --phones 4`, `sim model --serve ...`, then
`batch examples/tasks.yaml --devices examples/sim-devices.yaml` (on private ports), a person answering the
Meituan order's questions with `inbox answer`. Every task finishes, and every check is evaluated, `state:` lines
included: the verifier reads each `sim up` phone's world over adb (`sim-state`)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import yaml

from mobile_agent.farm.tasks import load_tasks
from mobile_agent.sim.farm import free_port
from mobile_agent.store.store import TrajectoryStore
from mobile_agent.verify.service import episode_verdict
from tests.cli.conftest import finished

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "tasks.yaml"
SIM_DEVICES = ROOT / "examples" / "sim-devices.yaml"


def _devices_for(adb_port: int, serials: list[str], folder: Path) -> Path:
    """examples/sim-devices.yaml with the test's private ports in place of 15037 and 16400-16403."""
    data = yaml.safe_load(SIM_DEVICES.read_text(encoding="utf-8"))
    assert len(data["devices"]) == len(serials)
    data["adb"] = f"127.0.0.1:{adb_port}"
    for entry, serial in zip(data["devices"], serials, strict=True):
        entry["serial"] = serial
    path = folder / "sim-devices.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def _answer_questions(batch: subprocess.Popen, db: str, folder: Path, env: dict[str, str]) -> list[str]:
    """Answers yes to every question the batch's episodes ask, as a person at `mobile-agent inbox` does, until the
    batch ends (at most 10 minutes)."""
    answered: list[str] = []
    deadline = time.monotonic() + 600
    while batch.poll() is None and time.monotonic() < deadline:
        listed = finished(["inbox", "--db", db, "--json"], folder, env, 60)
        assert listed.returncode == 0, listed.stderr
        for question in json.loads(listed.stdout):
            if question["reply"] is None:
                reply = finished(
                    ["inbox", "answer", question["episode"], "--reply", "yes", "--db", db], folder, env, 60
                )
                assert reply.returncode == 0, reply.stderr
                answered.append(question["proposed"] or "")
        time.sleep(1)
    return answered


def test_examples_tasks_yaml_runs_end_to_end_on_sim_up_phones(background, tmp_path, cli_env) -> None:
    phones = background.phones(4)
    port = free_port()
    model = background.start(
        "sim", "model", "--port", str(port), "--family", "ui-venus-2", "--serve", "ui-tars-1.5-7b=ui-tars"
    )
    background.banner(model, "http://127.0.0.1")
    devices = _devices_for(phones.adb_port, phones.serials, tmp_path)
    db = f"sqlite:///{tmp_path / 'store' / 'mobile_agent.db'}"
    batch = background.start(
        "batch", str(EXAMPLE), "--devices", str(devices), "--base-url", f"http://127.0.0.1:{port}/v1",
        "--db", db, "--json", "--quiet", "--stall", "120",
    )  # fmt: skip
    answered = _answer_questions(batch, db, tmp_path, cli_env)
    out, err = batch.communicate(timeout=60)
    assert batch.returncode == 0, out + err
    assert answered, "the Meituan order asks a person before it pays"

    specs = {loaded.spec.task: loaded.spec for loaded in load_tasks(EXAMPLE)}
    with TrajectoryStore.open(db) as store:
        episodes = store.list_episodes(limit=None)
        assert len(episodes) == sum(spec.repeats for spec in specs.values())
        for episode in episodes:
            assert str(episode.outcome) == "finished", (episode.task, episode.outcome, episode.outcome_detail)
            spec = specs[episode.task]
            if not spec.check:
                continue
            verdict = episode_verdict(store, episode.id)
            assert verdict is not None and str(verdict.verdict) == "complete", (episode.task, verdict)
            text = json.dumps(verdict.to_dict(), ensure_ascii=False)
            assert "no phone state" not in text, text
