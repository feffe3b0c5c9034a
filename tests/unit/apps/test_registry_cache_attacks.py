"""Attacks on the registry's disk cache (apps/registry_cache.py): getting a stale build served, getting a pickle
someone else wrote loaded, and the folder or disk misbehaving. Each test is one attack; the cache must answer
with a fresh build or a miss, never with another build and never by running a foreign pickle."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mobile_agent.apps import registry as registry_module
from mobile_agent.apps import registry_cache
from mobile_agent.apps.registry import POPUP_RULES_ENV, AppRegistry, load_registry, shipped_apps_dir
from mobile_agent.errors import UserError

GKD_FIXTURE = Path(__file__).parents[2] / "data" / "real_popups" / "gkd" / "mixed.json5"
NOBODY = 65534


def _new_process() -> None:
    registry_module._CACHE.clear()


def _entry(folder: Path) -> Path:
    (entry,) = sorted(folder.glob("registry-*.pickle"))
    return entry


def _one_manifest(folder: Path) -> Path:
    shipped = next(p for p in sorted(shipped_apps_dir().glob("*.yaml")) if not p.name.startswith("_"))
    folder.mkdir(exist_ok=True)
    return Path(shutil.copy(shipped, folder / shipped.name))


class _Planted:
    """A pickle that, when loaded, creates a marker: proof that a foreign entry ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (str(self.marker),))


def _foreign_pickle(path: Path, marker: Path, *, owner: int | None) -> Path:
    path.write_bytes(pickle.dumps(_Planted(marker)))
    if owner is not None:
        os.chown(path, owner, owner)
    return path


# ----- stale builds ------------------------------------------------------------------------------------------


def test_a_manifest_edited_keeping_its_size_and_mtime_is_read_again(disk_cache, tmp_path):
    manifest = _one_manifest(tmp_path / "apps")
    before = AppRegistry.from_dirs([manifest.parent])
    (app,) = before.apps.values()
    info = manifest.stat()
    text = manifest.read_text(encoding="utf-8")
    edited = text.replace(app.package, app.package[:-1] + ("x" if app.package[-1] != "x" else "y"), 1)
    assert len(edited) == len(text) and edited != text
    manifest.write_text(edited, encoding="utf-8")
    os.utime(manifest, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert manifest.stat().st_size == info.st_size and manifest.stat().st_mtime_ns == info.st_mtime_ns
    _new_process()
    (after,) = AppRegistry.from_dirs([manifest.parent]).apps.values()
    assert after.package != app.package


def test_a_renamed_entry_of_other_folders_is_not_served(disk_cache, tmp_path):
    """In a cache folder others may write (no sticky bit) a user cannot forge our file, but can rename one of our
    entries onto the name of another: the registry of other folders (say, without the user's safety manifests)."""
    with_app = _one_manifest(tmp_path / "with-app").parent
    empty = tmp_path / "empty"
    empty.mkdir()
    AppRegistry.from_dirs([with_app])
    stolen = tmp_path / "kept.pickle"
    os.link(_entry(disk_cache), stolen)  # the entry of the folder with an app, kept under another name
    _new_process()
    assert len(AppRegistry.from_dirs([empty])) == 0
    target = _entry(disk_cache)
    os.unlink(target)
    os.rename(stolen, target)  # one name again, owned by us, mode 0600: trusted in every other way
    _new_process()
    assert len(AppRegistry.from_dirs([empty])) == 0


def test_a_popup_rules_subscription_is_applied_after_the_cache_never_baked_in(
    disk_cache, tmp_path, monkeypatch
):
    subscription = tmp_path / "rules.json5"
    subscription.write_text(GKD_FIXTURE.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setenv(POPUP_RULES_ENV, str(subscription))
    monkeypatch.delenv("MOBILE_AGENT_APPS", raising=False)
    first = load_registry(apps_dir=None)
    assert [s.source for s in first.subscriptions] == [str(subscription)]
    subscription.write_text("{apps: [", encoding="utf-8")  # changed between runs: read again, so now an error
    _new_process()
    with pytest.raises(UserError):
        load_registry(apps_dir=None)
    monkeypatch.delenv(POPUP_RULES_ENV)
    _new_process()
    assert load_registry(apps_dir=None).subscriptions == []


def test_a_folder_swapped_for_a_link_to_another_folder_is_read_again(disk_cache, tmp_path):
    one = _one_manifest(tmp_path / "one").parent
    other = tmp_path / "other"
    other.mkdir()
    apps = tmp_path / "apps"
    apps.symlink_to(one)
    assert len(AppRegistry.from_dirs([apps])) == 1
    apps.unlink()
    apps.symlink_to(other)
    _new_process()
    assert len(AppRegistry.from_dirs([apps])) == 0


def test_the_same_folder_by_two_paths_gives_the_same_apps(disk_cache, tmp_path):
    real = _one_manifest(tmp_path / "real").parent
    alias = tmp_path / "alias"
    alias.symlink_to(real)
    by_real = AppRegistry.from_dirs([real])
    _new_process()
    by_alias = AppRegistry.from_dirs([alias])
    assert by_alias.apps == by_real.apps
    (app_id,) = by_alias.apps
    assert by_alias.path_of(app_id).parent == alias  # where the user will look, not the other path's build


# ----- foreign pickles ---------------------------------------------------------------------------------------


def _swap_on_first_look(monkeypatch, entry: Path, foreign: Path) -> None:
    """The race: the moment the cache first looks at its entry (a stat of the path, or opening it), another
    user renames their own file over it. Whatever is checked before that saw our genuine entry."""
    swapped = []
    real_stat, real_open = os.stat, os.open

    def swap_once() -> None:
        if not swapped:
            swapped.append(True)
            os.replace(foreign, entry)

    def stat(path, *args, **kwargs):
        found = real_stat(path, *args, **kwargs)
        if os.fspath(path) == str(entry):
            swap_once()
        return found

    def open_(path, *args, **kwargs):
        if os.fspath(path) == str(entry):
            swap_once()
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(os, "open", open_)


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs another owner (chown)")
def test_a_foreign_file_renamed_over_the_entry_after_the_check_is_not_loaded(
    disk_cache, tmp_path, monkeypatch
):
    AppRegistry.from_dirs([shipped_apps_dir()])
    entry = _entry(disk_cache)
    marker = tmp_path / "foreign-pickle-ran"
    foreign = _foreign_pickle(disk_cache / "theirs", marker, owner=NOBODY)
    _new_process()
    _swap_on_first_look(monkeypatch, entry, foreign)
    registry = AppRegistry.from_dirs([shipped_apps_dir()])
    monkeypatch.undo()
    assert not marker.exists()
    assert len(registry) > 40


def test_a_link_swapped_in_after_the_check_is_not_followed(disk_cache, tmp_path, monkeypatch):
    AppRegistry.from_dirs([shipped_apps_dir()])
    entry = _entry(disk_cache)
    marker = tmp_path / "linked-pickle-ran"
    target = _foreign_pickle(tmp_path / "writable-by-all.pickle", marker, owner=None)
    target.chmod(0o600)  # even a file we own: a link to it is not our entry
    link = disk_cache / "link"
    link.symlink_to(target)
    _new_process()
    _swap_on_first_look(monkeypatch, entry, link)
    registry = AppRegistry.from_dirs([shipped_apps_dir()])
    monkeypatch.undo()
    assert not marker.exists()
    assert len(registry) > 40


def test_an_entry_with_a_second_name_is_not_loaded(disk_cache, tmp_path, monkeypatch):
    """A hard link made elsewhere is a name someone else may control; the entry is rebuilt with one name."""
    AppRegistry.from_dirs([shipped_apps_dir()])
    entry = _entry(disk_cache)
    os.link(entry, tmp_path / "second-name")
    _new_process()
    built = []
    real_build = registry_module._Builder.build
    monkeypatch.setattr(registry_module._Builder, "build", lambda self: built.append(1) or real_build(self))
    AppRegistry.from_dirs([shipped_apps_dir()])
    assert built == [1] and _entry(disk_cache).stat().st_nlink == 1


def test_an_entry_that_is_a_fifo_does_not_hang(disk_cache, tmp_path):
    fresh = AppRegistry.from_dirs([shipped_apps_dir()])
    entry = _entry(disk_cache)
    entry.unlink()
    os.mkfifo(entry, 0o600)
    _new_process()
    probe = (
        "from mobile_agent.apps.registry import AppRegistry, shipped_apps_dir; "
        "print(len(AppRegistry.from_dirs([shipped_apps_dir()])))"
    )
    env = {**os.environ, registry_cache.CACHE_ENV: str(disk_cache)}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == [str(len(fresh))], done.stderr


# ----- folders and disks -------------------------------------------------------------------------------------


def test_a_cache_folder_that_is_a_file_costs_nothing_but_time(tmp_path, monkeypatch):
    blocker = tmp_path / "cache"
    blocker.write_text("not a folder")
    monkeypatch.setenv(registry_cache.CACHE_ENV, str(blocker))
    _new_process()
    assert len(AppRegistry.from_dirs([shipped_apps_dir()])) > 40
    assert blocker.read_text() == "not a folder"


def test_concurrent_processes_writing_the_same_entry_leave_one_whole_entry(disk_cache):
    probe = (
        "from mobile_agent.apps.registry import AppRegistry, shipped_apps_dir; "
        "print(len(AppRegistry.from_dirs([shipped_apps_dir()])))"
    )
    env = {**os.environ, registry_cache.CACHE_ENV: str(disk_cache)}
    running = [
        subprocess.Popen([sys.executable, "-c", probe], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    counts = {process.communicate(timeout=120)[0].strip() for process in running}
    assert len(counts) == 1 and all(process.returncode == 0 for process in running)
    assert [p.name for p in disk_cache.iterdir()] == [_entry(disk_cache).name]  # no temporary left behind
    _new_process()
    assert str(len(AppRegistry.from_dirs([shipped_apps_dir()]))) == counts.pop()


def test_a_full_disk_costs_nothing_but_time(tmp_path, monkeypatch):
    """A write that fails half-way (RLIMIT_FSIZE: the same EFBIG/ENOSPC path as a full disk) leaves no entry and
    no temporary file, and the build is still returned."""
    folder = tmp_path / "cache"
    probe = (
        "import resource; resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096)); "
        "from mobile_agent.apps.registry import AppRegistry, shipped_apps_dir; "
        "print(len(AppRegistry.from_dirs([shipped_apps_dir()])))"
    )
    env = {**os.environ, registry_cache.CACHE_ENV: str(folder)}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and int(done.stdout) > 40, done.stderr
    assert list(folder.iterdir()) == []
