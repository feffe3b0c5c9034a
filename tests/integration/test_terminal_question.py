"""A question a person answers after seeing it: `mobile-agent run` on a real pseudo-terminal, a simulated phone
behind the private adb server and the simulated model asking to send a WeChat message. A key typed before the
question was shown is discarded, a single key never approves, and only the typed word sends (the control that
proves the harness can do the harm). Harm is read from the simulated phone's state."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time

import pytest

from mobile_agent.sim.servers.model_server import SimModelServer

TASK = "给张三发微信说晚上好"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class PtyRun:
    """`mobile-agent run` with a pseudo-terminal for standard input and output."""

    def __init__(self, args: list[str], cwd, env) -> None:  # noqa: ANN001 - paths and dicts
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mobile_agent.cli.app", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env=env,
            close_fds=True,
        )
        os.close(slave)
        self.output = ""

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def wait_for(self, needle: str, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.output:
            assert time.monotonic() < deadline, f"no {needle!r} in: {self.output[-2000:]}"
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if ready:
                try:
                    self._read()
                except OSError:  # the process ended and closed its side
                    assert needle in self.output, self.output[-2000:]

    def finish(self, timeout: float = 60) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if ready:
                try:
                    self._read()
                except OSError:
                    break
        code = self.proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        os.close(self.master)
        return code

    def _read(self) -> None:
        self.output += _ANSI.sub("", os.read(self.master, 65536).decode(errors="replace"))

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def phone_and_model(sim_farm):
    farm = sim_farm(1, scenario="wechat_send")
    with SimModelServer(family="autoglm", model_name="autoglm") as server:
        yield farm, server


def _run(farm, server, tmp_path) -> PtyRun:  # noqa: ANN001 - a SimFarm and a SimModelServer
    env = dict(os.environ, HOME=str(tmp_path), COLUMNS="200")
    env.pop("MOBILE_AGENT_DB", None)
    args = [
        "run",
        TASK,
        "--adb",
        f"127.0.0.1:{farm.adb_port}",
        "--device",
        farm.serials[0],
        "--base-url",
        server.base_url,
        "--family",
        "autoglm",
        "--model",
        "autoglm",
    ]
    return PtyRun(args, tmp_path, env)


def _sent(farm) -> list:  # noqa: ANN001 - a SimFarm
    return farm.phones[farm.serials[0]].state.messages_sent


def test_a_key_typed_before_the_question_does_not_answer_it(phone_and_model, tmp_path):
    farm, server = phone_and_model
    run = _run(farm, server, tmp_path)
    try:
        run.type("y\n")  # typed at once, long before the agent reaches the send button
        run.wait_for("Type 'send' to allow it")
        time.sleep(1.5)
        assert run.proc.poll() is None, run.output[-2000:]  # still waiting: the early y answered nothing
        assert _sent(farm) == []
        run.type("y\n")  # a single key after the question declines
        assert run.finish() == 1, run.output[-2000:]
    finally:
        run.kill()
    assert "outcome: blocked" in run.output
    assert _sent(farm) == []


def test_the_typed_word_sends(phone_and_model, tmp_path):
    farm, server = phone_and_model
    run = _run(farm, server, tmp_path)
    try:
        run.wait_for("Type 'send' to allow it")
        run.type("send\n")
        assert run.finish() == 0, run.output[-2000:]
    finally:
        run.kill()
    assert [m["text"] for m in _sent(farm)] == ["晚上好"]
