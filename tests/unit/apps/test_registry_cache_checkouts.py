"""Two checkouts of one version (their files' paths and times differ, so do their keys) keep a disk-cache entry
each: starting one does not throw away the other's, and each start after the first is served from its own."""

from __future__ import annotations

import pytest

from mobile_agent.apps import registry as registry_module
from mobile_agent.apps import registry_cache
from mobile_agent.apps.registry import AppRegistry, shipped_apps_dir


def _as_checkout(monkeypatch, name: str, fingerprint: list) -> None:
    monkeypatch.setattr(registry_cache, "checkout", lambda: name)
    monkeypatch.setattr(registry_cache, "_source_fingerprint", lambda: fingerprint)
    registry_module._CACHE.clear()  # a new process


def _builds(monkeypatch) -> int:
    built = []
    real = AppRegistry._build.__func__
    monkeypatch.setattr(
        AppRegistry, "_build", classmethod(lambda cls, dirs: built.append(1) or real(cls, dirs))
    )
    AppRegistry.from_dirs([shipped_apps_dir()])
    monkeypatch.setattr(AppRegistry, "_build", classmethod(real))
    return len(built)


def test_two_checkouts_of_one_version_do_not_evict_each_other(disk_cache, monkeypatch):
    source = registry_cache._source_fingerprint()
    other = [
        (path.replace("/mobile_agent/", "/other-checkout/mobile_agent/"), t + 7, n) for path, t, n in source
    ]
    _as_checkout(monkeypatch, "aaaa", source)
    assert _builds(monkeypatch) == 1
    _as_checkout(monkeypatch, "bbbb", other)
    assert _builds(monkeypatch) == 1
    for _ in range(2):  # each start now finds its own entry
        _as_checkout(monkeypatch, "aaaa", source)
        assert _builds(monkeypatch) == 0
        _as_checkout(monkeypatch, "bbbb", other)
        assert _builds(monkeypatch) == 0
    assert len(list(disk_cache.glob("registry-*.pickle"))) == 2


def test_a_checkout_replaces_only_its_own_older_entry_and_few_are_kept(disk_cache, monkeypatch):
    source = registry_cache._source_fingerprint()
    for i in range(registry_cache.KEEP + 3):
        _as_checkout(monkeypatch, f"c{i:03}", source)
        _builds(monkeypatch)
    entries = list(disk_cache.glob("registry-*.pickle"))
    assert len(entries) == registry_cache.KEEP
    _as_checkout(monkeypatch, f"c{registry_cache.KEEP + 2:03}", [*source, ("x.py", 1, 1)])  # its code changed
    assert _builds(monkeypatch) == 1
    mine = list(disk_cache.glob(f"registry-c{registry_cache.KEEP + 2:03}-*.pickle"))
    assert len(mine) == 1 and len(list(disk_cache.glob("registry-*.pickle"))) == registry_cache.KEEP


@pytest.mark.parametrize("paths", [["/a/mobile_agent"], ["/b/mobile_agent"]])
def test_the_checkout_is_named_by_where_the_package_is(monkeypatch, paths):
    import mobile_agent

    here = registry_cache.checkout()
    monkeypatch.setattr(mobile_agent, "__path__", paths)
    assert registry_cache.checkout() != here and len(registry_cache.checkout()) == 12
