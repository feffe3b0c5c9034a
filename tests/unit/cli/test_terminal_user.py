"""The person at the terminal: a typed line is the answer, end of input is no answer, and a question the episode no
longer needs (its phone was taken over) stops waiting without leaving anything reading standard input."""

from __future__ import annotations

import os
import pty
import threading

import pytest

from mobile_agent.agent.config import EpisodeStopped, StopFlag
from mobile_agent.cli.terminal import TerminalUser


@pytest.fixture
def terminal(monkeypatch):
    """Standard input is the slave side of a pseudo-terminal; the test types on the master side."""
    master, slave = pty.openpty()
    stdin = os.fdopen(slave, "r", encoding="utf-8")
    monkeypatch.setattr("sys.stdin", stdin)
    yield master
    stdin.close()
    os.close(master)


def type_later(master: int, data: bytes, after: float = 0.3) -> None:
    """Types ``data`` on the terminal once the question has been shown."""
    threading.Timer(after, os.write, args=(master, data)).start()


def test_the_typed_line_is_the_answer(terminal):
    type_later(terminal, "好了\n".encode())
    assert TerminalUser().ask("请确认") == "好了"


def test_end_of_input_is_no_answer(terminal):
    type_later(terminal, b"\x04")  # Ctrl-D on an empty line
    assert TerminalUser().ask("请确认") is None


def test_what_was_typed_before_the_question_is_discarded(terminal):
    os.write(terminal, b"y\n")  # typed while the agent worked, before anything was asked
    type_later(terminal, b"send\n")
    assert TerminalUser().ask("Type 'send' to allow it") == "send"


def test_a_single_key_never_approves_a_consequential_action():
    from mobile_agent.agent.takeover import confirm_word, typed_approval

    assert confirm_word("pay") == "pay" and confirm_word("sensitive") == "yes"
    assert typed_approval("pay", "pay") and typed_approval(" YES ", "send") and typed_approval("确认", "call")
    assert not any(typed_approval(a, "pay") for a in ("y", "Y", "", "是", "好", "send", None))


def test_every_consequence_kind_is_approved_by_its_own_word():
    from mobile_agent.agent.takeover import confirm_word, typed_approval
    from mobile_agent.gate.lexicon import KINDS

    for kind in set(KINDS) - {"sensitive"}:
        assert confirm_word(kind) == kind and typed_approval(kind, kind) and not typed_approval("y", kind)


def test_a_stopped_episode_stops_waiting_for_the_person(terminal):
    flag = StopFlag()
    threading.Timer(0.3, flag.set, args=("phone taken over",)).start()
    with pytest.raises(EpisodeStopped, match="phone taken over"):
        flag.ask(TerminalUser(), "请确认")
    type_later(terminal, "迟到的回答\n".encode())  # typed later: nothing is left waiting to read it
    assert TerminalUser().ask("again") == "迟到的回答"


def test_an_answer_that_comes_after_the_stop_is_not_used(terminal):
    class LateUser:
        def ask(self, question: str) -> str | None:
            flag.set("taken over while the person typed")
            return "yes"

    flag = StopFlag()
    with pytest.raises(EpisodeStopped, match="while the person typed"):
        flag.ask(LateUser(), "请确认")


def test_without_a_terminal_nobody_can_answer(monkeypatch):
    read, write = os.pipe()
    with os.fdopen(read, "r") as stdin:
        monkeypatch.setattr("sys.stdin", stdin)
        assert TerminalUser().ask("请确认") is None
    os.close(write)
