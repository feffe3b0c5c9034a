"""The inventory (devices.yaml), discovery merged with it, parsers of what phones print, and the example files."""

from __future__ import annotations

from pathlib import Path

import pytest

from mobile_agent.errors import ConfigError, UserError
from mobile_agent.farm import inventory as farm
from mobile_agent.farm.health import (
    PhoneFacts,
    check_phone,
    parse_battery,
    parse_free_mb,
    parse_locked,
    parse_screen_on,
)
from mobile_agent.farm.inventory import (
    FarmPhone,
    PhoneEntry,
    PhoneState,
    discover,
    load_inventory,
)
from mobile_agent.farm.tasks import expand, load_tasks

REPO = Path(__file__).resolve().parents[3]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "devices.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_example_files_at_the_repo_root_load() -> None:
    inventory = load_inventory(REPO / "devices.yaml")
    assert len(inventory.phones) == 4 and inventory.discover
    remote = next(p for p in inventory.phones if p.serial == "192.168.1.20:5555")
    assert remote.adb == "10.0.0.7:5037" and "vendor:huawei" in remote.tags
    assert inventory.adb_servers == ["127.0.0.1:5037", "10.0.0.7:5037"]
    assert next(p for p in inventory.phones if p.serial == "emulator-5554").disabled
    tasks = load_tasks(REPO / "examples" / "tasks.yaml")
    assert len(expand(tasks)) == sum(t.spec.repeats for t in tasks) and any(t.spec.check for t in tasks)


def test_defaults_keys_and_line_numbers(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "adb: 'localhost:6000'\ndevices:\n  - serial: a\n    tags: {vendor: X}\n  - serial: b\n    adb: '7037'\n",
    )
    inventory = load_inventory(path)
    a, b = inventory.phones
    assert (a.adb, a.line, a.key) == ("localhost:6000", 3, "localhost:6000/a")
    assert (b.adb, b.line) == ("127.0.0.1:7037", 5)
    assert a.all_tags(("android:13",)) == {"vendor:x", "serial:a", "android:13"}
    bare = load_inventory(write(tmp_path, "- serial: c\n"), adb="127.0.0.1:9")
    assert [p.key for p in bare.phones] == ["127.0.0.1:9/c"]
    assert load_inventory(None, adb="127.0.0.1:9").adb_servers == ["127.0.0.1:9"]


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("devices:\n  - serial: a\n  - serial: b\n    colour: red\n", 4, "unknown key"),
        ("devices:\n  - tags: [x]\n", 2, "missing required key"),
        ("devices:\n  - serial: a\n    adb: 'host:notaport'\n", 3, "adb server address"),
        ("devices:\n  - serial: a\n  - serial: a\n", 3, "listed twice"),
        ("discover: maybe\n", 1, "discover"),
        ("devices:\n  - serial: a\n    tags: {apps: [{x: 1}]}\n", 3, "tags"),
    ],
)
def test_inventory_errors_name_the_line(tmp_path: Path, text: str, line: int, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_inventory(write(tmp_path, text))
    assert caught.value.line == line and words in caught.value.message, caught.value.one_line()


def test_discovery_merges_with_the_inventory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    servers = {
        "127.0.0.1:5037": {"a": "device", "b": "unauthorized", "extra": "device", "old": "offline"},
        "10.0.0.7:5037": None,  # does not answer
    }
    monkeypatch.setattr(farm, "adb_states", lambda adb: servers[adb])
    path = write(
        tmp_path,
        "devices:\n  - serial: a\n  - serial: b\n  - serial: gone\n  - serial: r\n    adb: '10.0.0.7:5037'\n"
        "  - serial: old\n    disabled: true\n",
    )
    states = {(p.serial, p.entry.listed): p.state for p in discover(load_inventory(path))}
    assert states == {
        ("a", True): PhoneState.ONLINE,
        ("b", True): PhoneState.UNAUTHORIZED,
        ("gone", True): PhoneState.ABSENT,
        ("r", True): PhoneState.UNREACHABLE,
        ("old", True): PhoneState.DISABLED,
        ("extra", False): PhoneState.ONLINE,
    }
    no_discovery = load_inventory(write(tmp_path, "discover: false\ndevices: [{serial: a}]\n"))
    assert [p.serial for p in discover(no_discovery)] == ["a"]

    servers["127.0.0.1:5037"] = None
    with pytest.raises(UserError, match="does not answer"):
        discover(load_inventory(None))


def test_a_phone_that_is_not_online_fails_its_check_with_a_fix() -> None:
    report = check_phone(FarmPhone(PhoneEntry("x", adb="127.0.0.1:1"), PhoneState.UNAUTHORIZED))
    assert not report.ok and report.failures[0].fix and "unauthorized" in report.failures[0].detail


def test_parsers_of_phone_output() -> None:
    assert (
        parse_battery("Current Battery Service state:\n  AC powered: false\n  level: 42\n  scale: 100\n")
        == 42
    )
    assert parse_battery("garbage") is None
    assert parse_screen_on("  mWakefulness=Awake\n") is True
    assert parse_screen_on("Display Power: state=OFF\n") is False
    assert parse_screen_on(None) is None
    assert parse_locked("  mShowingLockscreen=true mShowingDream=false\n") is True
    assert parse_locked("isStatusBarKeyguard=false") is False
    df = "Filesystem     1K-blocks    Used Available Use% Mounted on\n/dev/block/dm-5 52000000 2000000  10240000  17% /data\n"
    assert parse_free_mb(df) == 10000
    assert parse_free_mb("df: /data: Permission denied") is None
    facts = PhoneFacts(model="Pixel 8", android_version="14", screen_on=True, locked=False)
    assert facts.tags() == ("android:14", "model:pixel 8") and facts.screen == "on"
    assert PhoneFacts(screen_on=True, locked=True).screen == "locked" and PhoneFacts().screen == "?"
