"""The replay suite as CI runs it on the simulator, as a user would in terminals: `sim up` and `sim model`, a
`batch` of recorded tasks, then `mobile-agent replay --run RUN --json --report DIR` on the very phones the batch
left behind (they have moved on: the chats show the sent message); it passes, and bad input is one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.cli.conftest import finished

TASK = "给张三发微信说晚上好"


def test_the_suite_passes_in_ci_on_the_phones_a_batch_left_behind(background, tmp_path: Path) -> None:
    phones, base_url = background.phones_and_model(2, "wechat_send", "ui-venus-2")
    tasks = tmp_path / "tasks.yaml"
    entry = {"task": TASK, "app": "微信", "reset": "force-stop", "safety": {"allow": ["send@com.tencent.mm"]}}
    entry["check"] = {"app": "com.tencent.mm", "screen_text": ["晚上好"]}
    tasks.write_text(yaml.safe_dump({"tasks": [{**entry, "repeats": 2}]}, allow_unicode=True), "utf-8")
    db = f"sqlite:///{tmp_path / 'store.db'}"
    common = ["--adb", phones.adb, "--db", db]
    batch = finished(
        ["batch", str(tasks), "--base-url", base_url, "--json", *common], tmp_path, background.env, 300
    )
    assert batch.returncode == 0, batch.stderr
    run_id = json.loads(batch.stdout)["run_id"]
    suite = finished(
        ["replay", "--run", run_id, "--json", "-o", str(tmp_path / "r"), *common],
        tmp_path,
        background.env,
        300,
    )
    assert suite.returncode == 0, suite.stdout + suite.stderr
    result = json.loads(suite.stdout)
    assert result["passed"] and result["counts"]["replayed"] == 2, result
    assert all(e["verdict"] == "complete" for e in result["episodes"]), result
    assert Path(result["report"]).is_file()
    again = finished(
        ["replay", "--episodes", str(tmp_path / "nope.txt"), *common], tmp_path, background.env, 60
    )
    assert again.returncode == 2 and "Traceback" not in again.stderr and "hint:" in again.stderr
