"""The in-memory file system, and SimFarm's argument checks (no adb server needed)."""

from __future__ import annotations

import pytest

from mobile_agent.errors import UserError
from mobile_agent.sim.farm import SimFarm
from mobile_agent.sim.phone.fs import FileSystem, FsError, normalize


def test_paths_normalize_against_root():
    assert normalize("sdcard/../data//local/") == "/data/local"
    assert normalize("") == "/" and normalize("/") == "/"


def test_write_read_list_remove():
    fs = FileSystem()
    fs.write("/sdcard/a.txt", b"1", mode=0o600, mtime=5)
    st = fs.stat("/sdcard/a.txt")
    assert (st.size, st.mtime, st.mode & 0o777, st.is_file) == (1, 5, 0o600, True)
    fs.write("/sdcard/a.txt", b"2", append=True)
    assert fs.read("/sdcard/a.txt") == b"12"
    assert [name for name, _ in fs.listdir("/sdcard")] == ["DCIM", "Download", "Pictures", "a.txt"]
    with pytest.raises(FsError) as missing:
        fs.write("/no/such/dir/f", b"")
    assert missing.value.errno == 2
    fs.write("/no/such/dir/f", b"", make_parents=True)
    with pytest.raises(FsError):
        fs.remove("/no")  # a directory needs recursive=True
    fs.remove("/no", recursive=True)
    assert not fs.exists("/no/such/dir/f")


def test_mkdir_and_type_errors():
    fs = FileSystem()
    fs.mkdir("/x/y", parents=True)
    fs.mkdir("/x/y", parents=True)  # exists: fine with parents, like mkdir -p
    with pytest.raises(FsError):
        fs.mkdir("/x/y")
    fs.write("/x/file", b"")
    with pytest.raises(FsError):
        fs.write("/x/file/child", b"")
    with pytest.raises(FsError):
        fs.read("/x")


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"n": 0}, "at least one phone"),
        ({"profile": "warp"}, "unknown latency profile"),
        ({"base_port": 5560}, "5555-5585"),
    ],
)
def test_farm_rejects_bad_arguments_with_a_hint(kwargs, words):
    with pytest.raises(UserError) as err:
        SimFarm(**kwargs).start()
    assert words in err.value.message and err.value.hint
