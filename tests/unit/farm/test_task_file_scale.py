"""A 10,000-task file loads whole (every task with its own line) and enqueues once; the timing is
bench/task_files.py's, not a test's. Numbers where YAML would take true as 1 are refused."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mobile_agent.errors import ConfigError
from mobile_agent.farm.tasks import expand, load_tasks, to_new_tasks
from mobile_agent.store import queue as q
from mobile_agent.store.store import TrajectoryStore

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
import task_files  # noqa: E402


@pytest.mark.parametrize("suffix", ["yaml", "jsonl"])
def test_a_ten_thousand_task_file_checks_with_every_line(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"tasks.{suffix}"
    task_files.write_tasks(path, 10_000)
    loaded = load_tasks(path)
    assert len(loaded) == 10_000
    first_line = 3 if suffix == "yaml" else 1  # after `defaults:` and `tasks:`
    assert [t.line for t in loaded] == list(range(first_line, first_line + 10_000))
    assert loaded[9_999].spec.task == "给李四发微信 9999" and loaded[9_999].spec.check is not None
    assert loaded[2].spec.requires == ("apps:com.example.shop", "vendor:xiaomi")
    assert len(expand(loaded)) == 10_000 + 1_250  # every other shop task runs twice


def test_a_ten_thousand_task_file_enqueues_once(tmp_path: Path) -> None:
    path = tmp_path / "tasks.yaml"
    task_files.write_tasks(path, 10_000)
    rows = to_new_tasks(load_tasks(path))
    with TrajectoryStore.open(f"sqlite:///{tmp_path / 'q.db'}") as store:
        run = store.create_run("big", {})
        assert q.enqueue_tasks(store, run.id, rows) == len(rows)
        assert q.enqueue_tasks(store, run.id, rows) == 0  # a re-submit adds nothing
        claim = q.claim_task(store, worker="w", device="d", tags=())
        assert claim is not None


def test_a_task_error_far_down_a_big_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "tasks.yaml"
    task_files.write_tasks(path, 5_000)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[4_000] = "  - " + json.dumps({"task": "x", "max_steps": 0})
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"tasks.yaml:4001: max_steps"):
        load_tasks(path)


@pytest.mark.parametrize("key", ["repeats", "max_steps", "priority", "timeout"])
@pytest.mark.parametrize("word", ["true", "yes", "false"])
def test_a_yes_or_no_where_a_number_goes_is_refused(tmp_path: Path, key: str, word: str) -> None:
    path = tmp_path / "tasks.yaml"
    path.write_text(f"tasks:\n  - task: 打开设置\n    {key}: {word}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"tasks.yaml:3: {key}: expected a number"):
        load_tasks(path)


def test_a_yes_in_the_defaults_is_refused_where_the_defaults_say_it(tmp_path: Path) -> None:
    path = tmp_path / "tasks.yaml"
    path.write_text("defaults:\n  repeats: true\ntasks:\n  - 打开设置\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"tasks.yaml:2: repeats: expected a number"):
        load_tasks(path)
