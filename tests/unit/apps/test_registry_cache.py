"""The registry is built once per process for the same folders, again when a file in them changes, and kept on disk
for the next process (apps/registry_cache.py)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mobile_agent.apps import registry as registry_module
from mobile_agent.apps import registry_cache
from mobile_agent.apps.registry import AppRegistry, shipped_apps_dir
from mobile_agent.errors import ConfigError


def test_the_same_folders_give_the_same_registry(tmp_path):
    first = AppRegistry.from_dirs([shipped_apps_dir(), tmp_path])
    assert AppRegistry.from_dirs([shipped_apps_dir(), tmp_path]) is first


def test_a_changed_added_or_removed_manifest_is_read_again(tmp_path):
    shipped = next(p for p in sorted(shipped_apps_dir().glob("*.yaml")) if not p.name.startswith("_"))
    copy = tmp_path / shipped.name
    copy.write_bytes(shipped.read_bytes())
    first = AppRegistry.from_dirs([tmp_path])
    copy.write_bytes(shipped.read_bytes() + b"\n# edited\n")  # same second, other content
    second = AppRegistry.from_dirs([tmp_path])
    assert second is not first
    copy.unlink()
    third = AppRegistry.from_dirs([tmp_path])
    assert third is not second and len(third) == 0


# ----- between processes: the built registry on disk (apps/registry_cache.py) ---------------------------------

FIXTURES = Path(__file__).parent / "fixtures"


def _new_process() -> None:
    registry_module._CACHE.clear()


def _never_built(monkeypatch) -> None:
    def refuse(self):
        raise AssertionError("the manifests were parsed although a stored build matched")

    monkeypatch.setattr(registry_module._Builder, "build", refuse)


def _builds_in_a_new_process(monkeypatch) -> int:
    """How often a new process parses the shipped manifests to get its registry (0: the stored build served)."""
    _new_process()
    built = []
    real_build = registry_module._Builder.build
    monkeypatch.setattr(registry_module._Builder, "build", lambda self: built.append(1) or real_build(self))
    AppRegistry.from_dirs([shipped_apps_dir()])
    return len(built)


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("registry-*.pickle"))


def test_a_new_process_loads_the_stored_build_and_it_answers_as_a_fresh_one(disk_cache, monkeypatch):
    fresh = AppRegistry.from_dirs([shipped_apps_dir()])
    assert len(_entries(disk_cache)) == 1
    _new_process()
    _never_built(monkeypatch)
    loaded = AppRegistry.from_dirs([shipped_apps_dir()])
    assert loaded is not fresh and loaded.apps == fresh.apps
    assert [m.id for m in loaded] == [m.id for m in fresh]
    for name in ("微信", "WeChat", "支付宝", "com.taobao.taobao"):
        assert loaded.lookup(name) == fresh.lookup(name)
    for dump in sorted(FIXTURES.glob("*.xml")):
        xml = dump.read_text(encoding="utf-8")
        for package in ("com.tencent.mm", "com.taobao.taobao", "com.android.permissioncontroller"):
            assert loaded.match_popup(package, xml) == fresh.match_popup(package, xml), (dump.name, package)


def test_a_changed_manifest_misses_the_stored_build_and_replaces_it(disk_cache, tmp_path, monkeypatch):
    folder = tmp_path / "apps"
    folder.mkdir()
    shipped = next(p for p in sorted(shipped_apps_dir().glob("*.yaml")) if not p.name.startswith("_"))
    copy = folder / shipped.name
    copy.write_bytes(shipped.read_bytes())
    first = AppRegistry.from_dirs([folder])
    old = _entries(disk_cache)
    copy.write_bytes(shipped.read_bytes().replace(b"\nname:", b"\nname: Renamed\nold_name:", 1))
    _new_process()
    with pytest.raises(ConfigError):  # the edit broke it: the error is the build's, and nothing is stored
        AppRegistry.from_dirs([folder])
    assert _entries(disk_cache) == old
    copy.write_bytes(shipped.read_bytes() + b"\n# edited\n")
    _new_process()
    second = AppRegistry.from_dirs([folder])
    assert second.apps == first.apps and _entries(disk_cache) != old and len(_entries(disk_cache)) == 1


def test_a_changed_source_file_misses(disk_cache, monkeypatch):
    AppRegistry.from_dirs([shipped_apps_dir()])
    fingerprint = registry_cache._source_fingerprint()
    path, mtime, size = fingerprint[0]
    monkeypatch.setattr(
        registry_cache, "_source_fingerprint", lambda: [(path, mtime + 1, size), *fingerprint[1:]]
    )
    assert _builds_in_a_new_process(monkeypatch) == 1


@pytest.mark.parametrize(
    "damage",
    [b"", b"not a pickle", b"\x80\x05K\x01.", None],  # empty, garbage, a pickled int, cut in half
    ids=["empty", "garbage", "another-type", "truncated"],
)
def test_a_damaged_entry_is_a_miss_and_is_rewritten(disk_cache, damage):
    fresh = AppRegistry.from_dirs([shipped_apps_dir()])
    (entry,) = _entries(disk_cache)
    whole = entry.read_bytes()
    entry.write_bytes(whole[: len(whole) // 2] if damage is None else damage)
    _new_process()
    again = AppRegistry.from_dirs([shipped_apps_dir()])
    assert again.apps == fresh.apps
    assert entry.read_bytes() == whole or len(entry.read_bytes()) == len(whole)


def test_an_entry_others_may_write_is_not_loaded(disk_cache, monkeypatch):
    AppRegistry.from_dirs([shipped_apps_dir()])
    (entry,) = _entries(disk_cache)
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    entry.chmod(0o666)
    assert _builds_in_a_new_process(monkeypatch) == 1


def test_an_entry_that_is_a_link_is_not_loaded(disk_cache, monkeypatch):
    AppRegistry.from_dirs([shipped_apps_dir()])
    (entry,) = _entries(disk_cache)
    elsewhere = disk_cache.parent / "elsewhere.pickle"
    entry.rename(elsewhere)
    entry.symlink_to(elsewhere)
    assert _builds_in_a_new_process(monkeypatch) == 1


def test_an_empty_setting_turns_the_disk_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv(registry_cache.CACHE_ENV, "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    _new_process()
    AppRegistry.from_dirs([shipped_apps_dir()])
    _new_process()
    assert registry_cache.cache_dir() is None and list(tmp_path.rglob("*.pickle")) == []


def test_an_unwritable_cache_folder_costs_nothing_but_time(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the folder would be")
    monkeypatch.setenv(registry_cache.CACHE_ENV, str(blocker / "cache"))
    _new_process()
    assert len(AppRegistry.from_dirs([shipped_apps_dir()])) > 40
    _new_process()


def test_the_default_folder_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv(registry_cache.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert registry_cache.cache_dir() == tmp_path / "mobile-agent"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert registry_cache.cache_dir() == tmp_path / ".cache" / "mobile-agent"
    assert os.sep in str(registry_cache.cache_dir())


def test_a_process_served_by_the_disk_cache_parses_no_yaml(disk_cache):
    """What the stored build is for: a new process neither parses the manifests nor imports the YAML reader."""
    probe = (
        "import sys; from mobile_agent.apps.registry import load_registry; r = load_registry(); "
        "print(len(r), 'yaml' in sys.modules)"
    )
    env = {**os.environ, registry_cache.CACHE_ENV: str(disk_cache)}
    filled = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    served = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    count = filled.stdout.split()[0]
    assert filled.stdout.split() == [count, "True"] and served.stdout.split() == [count, "False"], (
        served.stderr
    )
