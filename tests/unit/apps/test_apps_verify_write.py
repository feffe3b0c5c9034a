"""Verification parsing and write-back (the phone side is covered by tests/integration/test_apps_verify.py)."""

from __future__ import annotations

import datetime as dt

import pytest

from mobile_agent.apps.registry import AppRegistry, load_registry
from mobile_agent.apps.verify import (
    parse_package_list,
    parse_resolved_activity,
    parse_version_name,
    record_verifications,
    verify_phone,
)

MANIFEST = """\
# 演示 header comment
id: demo
name: 演示
package: com.example.demo
category: tools
source:
  kind: public_list
  # which tables list it
  lists: [UI-Venus]
hints: >-
  keep me
"""


class ScriptedShell:
    """A phone's answers to the few commands verify runs (the real wire is tested in integration)."""

    def __init__(self, installed: set[str], version: str = "2.3.4") -> None:
        self.installed = installed
        self.version = version

    def __call__(self, argv: list[str]) -> str:
        match argv:
            case ["getprop", "ro.product.model"]:
                return "Pixel 7\n"
            case ["getprop", "ro.build.version.release"]:
                return "14\n"
            case ["pm", "list", "packages"]:
                return "".join(f"package:{p}\n" for p in sorted(self.installed))
            case ["cmd", "package", "resolve-activity", "--brief", pkg]:
                return (
                    f"priority=0 preferredOrder=0\n{pkg}/.Main\n"
                    if pkg in self.installed
                    else "No activity found\n"
                )
            case ["dumpsys", "package", _]:
                return f"Packages:\n    versionCode=1\n    versionName={self.version}\n"
        raise AssertionError(f"unexpected command {argv}")


def test_parsers():
    assert parse_package_list("package:a.b\npackage:c.d\r\n\n") == {"a.b", "c.d"}
    assert parse_resolved_activity("priority=0 x\ncom.a/.Main\n") == "com.a/.Main"
    assert parse_resolved_activity("No activity found\n") is None
    assert parse_version_name("  versionCode=3\n    versionName=8.0.1\n") == "8.0.1"
    assert parse_version_name("") is None


@pytest.fixture
def demo(tmp_path):
    (tmp_path / "demo.yaml").write_text(MANIFEST, encoding="utf-8")
    return tmp_path


def test_verify_phone_with_scripted_answers(demo):
    registry = AppRegistry.from_dirs([demo])
    report = verify_phone(registry, ScriptedShell({"com.example.demo"}), "serial-1")
    [check] = report.checks
    assert (
        check.installed and check.launch_activity == "com.example.demo/.Main" and check.app_version == "2.3.4"
    )
    assert report.phone.model == "Pixel 7" and report.phone.android == "14"
    assert verify_phone(registry, ScriptedShell(set()), "s").missing[0].app_id == "demo"


def test_write_keeps_comments_and_order_and_replaces_same_phone_entries(demo):
    path = demo / "demo.yaml"
    registry = AppRegistry.from_dirs([demo])
    day = dt.date(2025, 3, 1)
    report = verify_phone(registry, ScriptedShell({"com.example.demo"}), "s")
    assert record_verifications(registry, report, today=day) == [path]
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# 演示 header comment\n") and "  # which tables list it\n" in text
    assert text.index("verified:") < text.index("hints:")
    assert text.endswith("hints: >-\n  keep me\n")

    # Same phone, new app version: the entry is replaced, not added.
    registry = AppRegistry.from_dirs([demo])
    report = verify_phone(registry, ScriptedShell({"com.example.demo"}, version="2.4.0"), "s")
    record_verifications(registry, report, today=day)
    [entry] = load_registry(demo, include_shipped=False).resolve("演示").source.verified
    assert entry.app_version == "2.4.0" and entry.device == "Pixel 7" and entry.date == day
    assert path.read_text(encoding="utf-8").count("verified:") == 1


def test_write_into_a_one_line_source(demo):
    path = demo / "demo.yaml"
    path.write_text(MANIFEST.replace("source:\n  kind: public_list\n  # which tables list it\n  lists: [UI-Venus]\n",
                                     "source: {kind: common_knowledge}\n"), encoding="utf-8")  # fmt: skip
    registry = AppRegistry.from_dirs([demo])
    record_verifications(registry, verify_phone(registry, ScriptedShell({"com.example.demo"}), "s"))
    manifest = load_registry(demo, include_shipped=False).resolve("演示")
    assert manifest.source.kind == "common_knowledge" and len(manifest.source.verified) == 1
    assert manifest.hints == "keep me"


def test_nothing_installed_writes_nothing(demo):
    registry = AppRegistry.from_dirs([demo])
    before = (demo / "demo.yaml").read_text(encoding="utf-8")
    assert record_verifications(registry, verify_phone(registry, ScriptedShell(set()), "s")) == []
    assert (demo / "demo.yaml").read_text(encoding="utf-8") == before
