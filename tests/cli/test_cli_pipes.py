"""Output in a pipe (`mobile-agent episodes | cat`) is never cut: tables keep whole serials, ids and tasks, and the
demo's step lines do not wrap, when standard output is not a terminal and COLUMNS is unset (as in a script)."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

from mobile_agent.actions import Action, Outcome
from mobile_agent.store import answers as answer_db
from mobile_agent.store import pauses
from mobile_agent.store.convert import now_utc
from mobile_agent.store.store import TrajectoryStore
from tests.cli.conftest import finished

SERIAL = "192.168.100.200:16400"  # 21 characters, as a phone over Wi-Fi
TASK = "给张三发微信说晚上好" * 3 + "然后打开美团帮我点一份午饭"  # 43 characters, 86 columns
assert len(SERIAL) == 21 and len(TASK) >= 40


def _piped(args: list[str], tmp_path: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS" and not k.startswith("MOBILE_AGENT_")}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / ".config"))
    result = finished(args, tmp_path, env, 120)  # stdout is a pipe
    assert result.returncode == 0, result.stderr
    assert "…" not in result.stdout, result.stdout
    return result.stdout


def _store(tmp_path: Path) -> tuple[str, str, str]:
    db = f"sqlite:///{tmp_path / 'store' / 'mobile_agent.db'}"
    with TrajectoryStore.open(db) as store:
        done = store.start_episode(TASK, device=SERIAL, family="ui-venus-2", model="m")
        store.finish_episode(done.id, Outcome.FINISHED)
        waiting = store.start_episode(TASK, device=SERIAL, family="ui-venus-2", model="m")
        store.finish_episode(waiting.id, Outcome.NEEDS_USER)
        pause = pauses.create_pause(
            store,
            pauses.PauseRecord(
                waiting.id,
                0,
                "confirm",
                "确认支付 ¥25.00 给 美团外卖?",
                device=SERIAL,
                reserve_s=60,
                pending_action=Action.tap(1, 2),
            ),
        )
        answer_db.open_window(
            store, pause.id, waiting.id, answer_by=now_utc() + timedelta(minutes=5), held_by="w"
        )
    return db, done.id, waiting.id


def test_episodes_and_inbox_in_a_pipe_keep_whole_serials_ids_and_tasks(tmp_path) -> None:
    db, done, waiting = _store(tmp_path)
    listing = _piped(["episodes", "--db", db], tmp_path)
    rows = [line for line in listing.splitlines() if done in line or waiting in line]
    assert len(rows) == 2 and all(SERIAL in row and TASK in row for row in rows), listing
    inbox = _piped(["inbox", "--db", db], tmp_path)
    [row] = [line for line in inbox.splitlines() if waiting in line]
    assert (
        SERIAL in row
        and "确认支付 ¥25.00 给 美团外卖?" in row
        and f"mobile-agent inbox answer {waiting}" in row
    )


def test_devices_in_a_pipe_keep_whole_serials_and_notes(tmp_path) -> None:
    notes = "desk 3, USB hub port 2, needs USB debugging (security settings)"
    (tmp_path / "devices.yaml").write_text(
        f"adb: 127.0.0.1:1\ndiscover: false\ndevices:\n  - serial: '{SERIAL}'\n    notes: '{notes}'\n"
        "    tags: {vendor: xiaomi, android: 13}\n",
        encoding="utf-8",
    )
    listing = _piped(["devices", "--devices", "devices.yaml", "--no-probe"], tmp_path)
    [row] = [line for line in listing.splitlines() if SERIAL in line]
    assert notes in row and "127.0.0.1:1" in row, listing


def test_the_demo_in_a_pipe_prints_one_line_per_step(tmp_path) -> None:
    out = _piped(["demo"], tmp_path)
    lines = out.splitlines()
    steps = [line for line in lines if line[:3].strip().isdigit()]
    assert len(steps) >= 5, out
    assert all(("screenshot" in line) for line in steps), out  # each step's timings stay on its line
    [safety] = [line for line in lines if line.startswith("safety:")]
    assert safety.endswith("(--allow)."), out
