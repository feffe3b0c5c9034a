"""The `apps` commands as a user runs them (no phone needed for list and show)."""

from __future__ import annotations

import json
import subprocess
import sys

from typer.testing import CliRunner

from mobile_agent.apps.registry import UnknownApp
from mobile_agent.cli.apps import apps_app
from mobile_agent.errors import UserError


def invoke(*args: str):
    return CliRunner().invoke(apps_app, list(args))


def test_list_json_filters_by_category():
    out = invoke("list", "--category", "maps", "--json")
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)
    assert {r["id"] for r in rows} == {"amap", "baidumap", "tencentmap"}
    assert all(r["category"] == "maps" for r in rows)


def test_list_table_has_every_app():
    out = invoke("list")
    assert out.exit_code == 0 and "com.tencent.mm" in out.output and "apps" in out.output.splitlines()[0]


def test_list_unknown_category_is_a_user_error():
    out = invoke("list", "--category", "games")
    assert isinstance(out.exception, UserError) and "maps" in out.exception.hint


def test_show_json():
    out = invoke("show", " WeChat ", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["package"] == "com.tencent.mm" and data["source"]["kind"] == "public_list"


def test_show_text_mentions_source_and_rules():
    out = invoke("show", "12306")
    assert out.exit_code == 0
    assert "com.MobileTicket" in out.output and "not verified on a phone yet" in out.output


def test_show_unknown_raises_with_suggestions():
    out = invoke("show", "美团外")
    assert isinstance(out.exception, UnknownApp)
    assert "美团外卖" in out.exception.suggestions


def test_show_unknown_through_the_real_entry_point_is_one_line_and_exit_2():
    proc = subprocess.run(
        [sys.executable, "-c", "from mobile_agent.cli.app import main; main()", "apps", "show", "美团外"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines[0].startswith("error: unknown app") and "美团外卖" in proc.stderr


def test_show_with_a_user_folder(tmp_path):
    (tmp_path / "demo.yaml").write_text(
        "id: demo\nname: 演示\npackage: com.example.demo\ncategory: tools\nsource: {kind: common_knowledge}\n",
        encoding="utf-8",
    )
    out = invoke("show", "演示", "--apps-dir", str(tmp_path), "--json")
    assert out.exit_code == 0 and json.loads(out.output)["id"] == "demo"


def test_broken_user_folder_names_file_and_line(tmp_path):
    (tmp_path / "demo.yaml").write_text("id: demo\nname: [\n", encoding="utf-8")
    out = invoke("list", "--apps-dir", str(tmp_path))
    assert isinstance(out.exception, UserError)
    assert f"{tmp_path / 'demo.yaml'}:" in out.exception.message
