"""A file of episode ids for a replay suite: every bad file is a one-line error naming the line, never a trace."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobile_agent.errors import UserError
from mobile_agent.replay.suite import read_episode_file


def test_ids_comments_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "suite.txt"
    path.write_text("# nightly regression\n9372348f48ad\n\ned75fb15f0a1  # the chat one\n", "utf-8")
    assert read_episode_file(path) == ["9372348f48ad", "ed75fb15f0a1"]


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"", "names no episode"),
        (b"# only a comment\n", "names no episode"),
        (b"abc\nnot an id!\n", ":2:"),
        (b"\xff\xfe\x00", "not UTF-8"),
        (b"a" * 70 + b"\n", ":1:"),
    ],
)
def test_bad_files_say_where(tmp_path: Path, content: bytes, said: str) -> None:
    path = tmp_path / "suite.txt"
    path.write_bytes(content)
    with pytest.raises(UserError) as caught:
        read_episode_file(path)
    assert said in caught.value.message and caught.value.hint
    assert "\n" not in caught.value.message


def test_a_missing_file_or_a_folder(tmp_path: Path) -> None:
    for path in (tmp_path / "nope.txt", tmp_path):
        with pytest.raises(UserError):
            read_episode_file(path)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=200)
@given(content=st.binary(max_size=300))
def test_any_bytes_give_ids_or_a_user_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "suite.txt"
    path.write_bytes(content)
    try:
        ids = read_episode_file(path)
    except UserError as exc:
        assert exc.hint and "\n" not in exc.message
        return
    assert ids and all(i.isascii() and " " not in i for i in ids)
