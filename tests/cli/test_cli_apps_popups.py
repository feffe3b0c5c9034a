"""`mobile-agent apps popups TREE.xml`, `--popup-rules`, and `apps verify` without a phone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mobile_agent.apps.registry import POPUP_RULES_ENV
from mobile_agent.cli.app import main
from mobile_agent.cli.popup_rules import CATEGORIES_ENV

DATA = Path(__file__).parents[1] / "data" / "real_popups"


@pytest.fixture(autouse=True)
def _no_inherited_rules(monkeypatch):
    monkeypatch.delenv(POPUP_RULES_ENV, raising=False)
    monkeypatch.delenv(CATEGORIES_ENV, raising=False)
    monkeypatch.delenv("MOBILE_AGENT_APPS", raising=False)


class Result:
    def __init__(self, code: int, output: str) -> None:
        self.exit_code, self.output = code, output


@pytest.fixture
def run(capsys):
    def invoke(*args: str) -> Result:
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0
        captured = capsys.readouterr()
        return Result(code, captured.out + captured.err)

    return invoke


def test_shows_the_rule_that_fires_and_where_it_taps(run):
    result = run("apps", "popups", str(DATA / "screens/update/04_eleme.xml"))
    assert result.exit_code == 0, result.output
    assert "me.ele" in result.output and "eleme:update_cancel" in result.output
    assert "(340, 1315)" in result.output.replace(" ,", ",") or "340" in result.output


def test_json_names_rule_tap_element_and_sources(run):
    result = run("apps", "popups", str(DATA / "screens/splash/01_taobao.xml"), "--json", "--all")
    payload = json.loads(result.output)
    assert payload["package"] == "com.taobao.taobao"
    fired = payload["fires"]
    assert fired["rule"] == "splash_close" and fired["tap"] == [955, 170]
    assert fired["element"]["resource_id"] == "com.taobao.taobao:id/close"
    assert fired["sources"]
    assert payload["tried"][0]["fires"] is True


def test_an_ordinary_screen_fires_nothing_and_all_says_why(run):
    result = run("apps", "popups", str(DATA / "screens/ordinary/05_wework_messages.xml"), "--all")
    assert result.exit_code == 0, result.output
    assert "no popup rule fires" in result.output
    assert "found nothing" in result.output or "no match" in result.output


def test_app_option_takes_a_name_or_a_package(run):
    tree = str(DATA / "screens/update/04_eleme.xml")
    by_name = json.loads(run("apps", "popups", tree, "--app", "饿了么", "--json").output)
    assert by_name["package"] == "me.ele" and by_name["fires"]["rule"] == "update_cancel"
    other = json.loads(run("apps", "popups", tree, "--app", "com.example.other", "--json").output)
    assert other["package"] == "com.example.other"
    assert other["fires"] is None or other["fires"]["app"] is None  # only shared rules apply


def test_popup_rules_brief_line_in_json(run):
    tree = str(DATA / "screens/update/38_lazy_audio.xml")
    result = run("apps", "popups", tree, "--popup-rules", str(DATA / "gkd/mixed.json5"), "--json")
    payload = json.loads(result.output)
    (brief,) = payload["subscriptions"]
    assert "10 apps, 14 groups, 30 rules; 11 groups act" in brief
    assert payload["fires"]["rule"] == "gkd/bubei.tingshu/2/0"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["apps", "popups", "/nonexistent/tree.xml"], "cannot read"),
        (["apps", "popups", str(DATA / "sources.md")], "not a uiautomator dump"),
        (["apps", "popups", str(DATA / "screens/update/04_eleme.xml"), "--app", "nosuchapp"], "unknown app"),
        (
            [
                "apps",
                "popups",
                str(DATA / "screens/update/04_eleme.xml"),
                "--popup-rules",
                str(DATA / "sources.md"),
            ],
            "JSON5",
        ),
        (["apps", "popups"], "give a dump"),
        (["apps", "popups", "--report"], "--report reads the --popup-rules files"),
        (
            [
                "apps",
                "popups",
                "--report",
                "--popup-rules",
                str(DATA / "gkd/mixed.json5"),
                "--popup-categories",
                "nosuch",
            ],
            "names no category",
        ),
        (["apps", "popups", "--report", "--popup-rules", str(DATA)], "is a folder"),
        (
            ["run", "open wechat", "--popup-rules", "/nonexistent/rules.json5", "--device", "none:1"],
            "does not exist",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(run, args, message):
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_verify_without_a_phone_lists_packages_no_source_confirms(run):
    result = run("apps", "verify", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["unconfirmed"]
    ids = {r["id"] for r in rows}
    assert "calculator" in ids and "yuanbao" not in ids and "qianwen" not in ids
    table = run("apps", "verify")
    assert "no source confirms" in table.output


def test_report_text_and_json_agree(run):
    path = str(DATA / "gkd/mixed.json5")
    text = run("apps", "popups", "--report", "--popup-rules", path)
    data = json.loads(run("apps", "popups", "--report", "--popup-rules", path, "--json").output)
    (sub,) = data["subscriptions"]
    assert text.exit_code == 0
    assert f"imported {sub['imported']}, refused {sub['refused']}" in text.output
    for row in sub["refusals"]:
        assert f"refused {row['count']:>4}: {row['reason']}" in text.output
