"""`mobile-agent adb`: adb's own -H/-P/-L before the command name the server; everything else passes through."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mobile_agent.cli.adb import command_of, split_server
from mobile_agent.device.adb_server import adb_command
from mobile_agent.errors import ConfigError


@pytest.mark.parametrize(
    "args, expected",
    [
        (["devices"], (None, None, ["devices"])),
        (["-P", "27037", "devices"], (None, "27037", ["devices"])),
        (
            ["-H", "10.0.0.7", "-P", "5038", "-s", "x", "shell", "ls"],
            ("10.0.0.7", "5038", ["-s", "x", "shell", "ls"]),
        ),
        (["-L", "tcp:10.0.0.7:5038", "devices"], ("10.0.0.7", "5038", ["devices"])),
        (
            ["shell", "grep", "-P", "x"],
            (None, None, ["shell", "grep", "-P", "x"]),
        ),  # after the command: adb's
    ],
)
def test_server_options_are_taken_only_before_the_command(args, expected) -> None:
    assert split_server(args) == expected


def test_the_command_word_skips_global_options() -> None:
    assert command_of(["-s", "emulator-5554", "-d", "shell", "id"]) == "shell"
    assert command_of(["-a"]) is None


def test_a_bad_socket_spec_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        split_server(["-L", "localabstract:adb", "devices"])


@given(
    st.lists(
        st.sampled_from(["-H", "-P", "-L", "-s", "devices", "shell", "x", "tcp:1", "tcp:h:2"]), max_size=8
    )
)
def test_split_never_loses_an_argument_it_does_not_consume(args) -> None:
    try:
        host, port, rest = split_server(args)
    except ConfigError:
        return
    consumed = len(args) - len(rest)
    assert consumed % 2 == 0 and all(arg in args for arg in rest)


def test_hints_name_the_command_that_ships_with_the_wheel() -> None:
    assert adb_command("127.0.0.1:27037", "devices") == "mobile-agent adb -P 27037 devices"
    assert adb_command("10.0.0.7:5037", "connect", "p") == "mobile-agent adb -H 10.0.0.7 -P 5037 connect p"
    assert adb_command(None, "devices") == "mobile-agent adb devices"
