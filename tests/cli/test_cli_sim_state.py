"""A `sim up` phone's world state, read over the adb channel it serves (`adb shell sim-state`), as the verifier of a
batch or a replay suite reads it in another process; a phone without that command has no state (None)."""

from __future__ import annotations

import json

from mobile_agent.verify.phone_state import read_phone_state
from tests.cli.conftest import finished


def test_a_sim_up_phone_answers_sim_state_with_its_world(background, tmp_path, cli_env) -> None:
    phones = background.phones(2, scenario="meituan_order")
    shell = finished(
        ["adb", "-P", str(phones.adb_port), "-s", phones.serials[0], "shell", "sim-state"],
        tmp_path,
        cli_env,
        60,
    )
    assert shell.returncode == 0, shell.stderr
    state = json.loads(shell.stdout)
    assert (
        state["orders"] == [] and state["foreground"] == "com.android.launcher3" and "messages_sent" in state
    )
    assert read_phone_state(phones.serials[1], phones.adb) == state  # the same snapshot through adbutils
    assert read_phone_state("127.0.0.1:1", phones.adb) is None  # no such phone
    assert read_phone_state(phones.serials[0], "127.0.0.1:1") is None  # no adb server there
