"""`apps verify` against simulated phones on a private adb server: installed / missing / launchable, and --write."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from mobile_agent.apps.registry import AppRegistry, load_registry, shipped_apps_dir
from mobile_agent.apps.verify import adb_shell, record_verifications, verify_phone
from mobile_agent.cli.apps import apps_app
from mobile_agent.errors import DeviceNotFound
from mobile_agent.sim.farm import SimFarm

REMOVED = ["com.taobao.taobao", "com.sankuai.meituan.takeoutnew"]


@pytest.fixture(scope="module")
def farm():
    with SimFarm(2) as running:
        trimmed = running.phones[running.serials[0]]
        for package in REMOVED:
            assert trimmed.uninstall(package)
        yield running


@pytest.fixture(scope="module")
def registry() -> AppRegistry:
    return load_registry(include_shipped=True)


def run_cli(*args: str):
    result = CliRunner().invoke(apps_app, list(args), catch_exceptions=True)
    return result


def test_library_reports_installed_and_missing(farm, registry):
    serial = farm.serials[0]
    report = verify_phone(registry, adb_shell(farm.device(serial)), serial)
    by_id = {c.app_id: c for c in report.checks}
    assert not by_id["taobao"].installed and not by_id["meituan_waimai"].installed
    assert by_id["meituan"].installed  # 美团 stays when 美团外卖 is removed
    wechat = by_id["wechat"]
    assert wechat.package == "com.tencent.mm"
    assert wechat.launch_activity is not None and wechat.launch_activity.startswith("com.tencent.mm/")
    assert wechat.app_version
    assert report.phone.model and report.phone.android
    installed_on_phone = set(farm.phones[serial].installed_packages())
    for check in report.checks:
        manifest = registry.get(check.app_id)
        assert check.installed == any(p in installed_on_phone for p in manifest.packages), check.app_id


def test_cli_json_on_two_phones(farm):
    adb = f"127.0.0.1:{farm.adb_port}"
    results = {}
    for serial in farm.serials:
        out = run_cli("verify", "--device", serial, "--adb", adb, "--json")
        assert out.exit_code == 0, out.output
        payload = json.loads(out.output)
        assert payload["serial"] == serial and payload["written"] == []
        results[serial] = {a["id"]: a for a in payload["apps"]}
    trimmed, full = (results[s] for s in farm.serials)
    assert trimmed["taobao"]["installed"] is False and full["taobao"]["installed"] is True
    assert trimmed["meituan_waimai"]["package"] is None
    assert full["meituan_waimai"]["package"] == "com.sankuai.meituan.takeoutnew"
    assert trimmed["wechat"]["launch_activity"].startswith("com.tencent.mm/")


def test_cli_table(farm):
    out = run_cli("verify", "--device", farm.serials[0], "--adb", f"127.0.0.1:{farm.adb_port}", "--all")
    assert out.exit_code == 0, out.output
    assert "installed" in out.output and "missing" in out.output
    total = len(load_registry())
    assert f"{total - 2} installed, 2 missing" in out.output


def test_unknown_serial_is_a_user_error(farm):
    out = run_cli("verify", "--device", "127.0.0.1:1", "--adb", f"127.0.0.1:{farm.adb_port}")
    assert isinstance(out.exception, DeviceNotFound) and out.exception.exit_code == 2


def test_write_records_the_check_in_the_users_manifest(farm, tmp_path):
    # Work on copies in a user folder: the shipped manifests must not change during tests.
    for name in ("wechat.yaml", "taobao.yaml"):
        shutil.copy(shipped_apps_dir() / name, tmp_path / name)
    original = (tmp_path / "wechat.yaml").read_text(encoding="utf-8")
    shipped_before = (shipped_apps_dir() / "wechat.yaml").read_text(encoding="utf-8")
    serial = farm.serials[0]
    out = run_cli(
        "verify", "--device", serial, "--adb", f"127.0.0.1:{farm.adb_port}",
        "--apps-dir", str(tmp_path), "--app", "微信", "--app", "淘宝", "--write", "--json",
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["written"] == [
        str(tmp_path / "wechat.yaml")
    ]  # taobao is missing: untouched

    text = (tmp_path / "wechat.yaml").read_text(encoding="utf-8")
    assert text.startswith(original.splitlines()[0])  # the header comment survives
    assert text.replace(_verified_block(text), "") == original  # nothing else changed
    assert (tmp_path / "taobao.yaml").read_text(encoding="utf-8") == (
        shipped_apps_dir() / "taobao.yaml"
    ).read_text(encoding="utf-8")
    assert (shipped_apps_dir() / "wechat.yaml").read_text(encoding="utf-8") == shipped_before

    reloaded = load_registry(tmp_path).resolve("微信")
    [entry] = reloaded.source.verified
    phone = farm.phones[serial]
    assert entry.package == "com.tencent.mm" and entry.device == phone.props["ro.product.model"]
    assert entry.android == phone.props["ro.build.version.release"] and entry.app_version
    assert reloaded.source.kind == "public_list"  # where the name came from is still recorded

    # A second run on the same phone replaces the entry instead of piling up duplicates.
    registry = AppRegistry.from_dirs([tmp_path])
    report = verify_phone(registry, adb_shell(farm.device(serial)), serial, app_ids=["wechat"])
    assert record_verifications(registry, report) == []
    assert load_registry(tmp_path).resolve("微信").source.verified == [entry]


def _verified_block(text: str) -> str:
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("  verified:"))
    end = start + 1
    while end < len(lines) and lines[end].startswith("    "):
        end += 1
    return "".join(lines[start:end])
