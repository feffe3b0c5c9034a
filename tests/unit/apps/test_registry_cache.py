"""The registry is built once per process for the same folders, and again when a file in them changes."""

from __future__ import annotations

from mobile_agent.apps.registry import AppRegistry, shipped_apps_dir


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
