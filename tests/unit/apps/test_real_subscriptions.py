"""`apps popups --report` over the five public subscriptions (tests/data/real_popups/subscriptions, see its
sources.yaml): every rule of every documented form is imported; the report lists what is refused, by reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mobile_agent.apps.gkd_import import load_subscription
from mobile_agent.apps.registry import POPUP_RULES_ENV, AppRegistry
from mobile_agent.cli.app import main
from mobile_agent.cli.popup_rules import CATEGORIES_ENV

DATA = Path(__file__).parents[2] / "data" / "real_popups"
SUBS = DATA / "subscriptions"
FILES = [
    "gkd-kit.json5",
    "ganlinte.json5",
    "aisouler.sample.json5",
    "lin-arm.sample.json5",
    "664873568.sample.json5",
]
# What a rule may be refused for: not a selector form, but a file's own placeholder.
ALLOWED_REFUSALS = {"a rule without matches or anyMatches (a placeholder)"}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    monkeypatch.delenv(POPUP_RULES_ENV, raising=False)
    monkeypatch.delenv(CATEGORIES_ENV, raising=False)


def report(capsys, *args: str) -> dict:
    try:
        main(["apps", "popups", "--report", "--json", *args])
    except SystemExit as exc:
        assert exc.code in (0, None), capsys.readouterr()
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", FILES)
def test_the_report_lists_refusals_by_reason_and_no_selector_form_is_among_them(capsys, name):
    (sub,) = report(capsys, "--popup-rules", str(SUBS / name))["subscriptions"]
    assert sub["imported"] + sub["refused"] == sub["rules"] > 0
    reasons = {row["reason"] for row in sub["refusals"]}
    assert reasons <= ALLOWED_REFUSALS, reasons
    for row in sub["refusals"]:
        assert row["count"] == len(row["rules"]) and all(r["rule"] for r in row["rules"])


def test_the_text_report_groups_refusals_and_says_how_many(capsys):
    with pytest.raises(SystemExit) as done:
        main(["apps", "popups", "--report", "--popup-rules", str(SUBS / "lin-arm.sample.json5")])
    assert done.value.code in (0, None)
    text = capsys.readouterr().out
    assert "id667的GKD订阅" in text and "v560" in text
    assert "refused" in text and "rules act" in text


def test_the_whole_licensed_files_import_every_rule():
    for name, rules in (("gkd-kit.json5", 1973), ("ganlinte.json5", 1988)):
        imported = load_subscription(SUBS / name, [])
        assert len(imported.imported) == rules and imported.skipped == []


def test_the_rules_the_issue_names_are_imported_and_run():
    aisouler = load_subscription(SUBS / "aisouler.sample.json5", [])
    by_key = {r.key: r for r in aisouler.imported}
    splash, update = by_key["GLOBAL/0/0"], by_key["GLOBAL/1/0"]
    assert any("(?is)" in s for s in splash.rule.any_selector)
    assert any(s.startswith("([text*=") for s in update.rule.selector)
    assert splash.enabled and splash.rule.kind == "splash" and splash.rule.limits.match_time == 10000
    # the global splash rule on a real-looking splash screen of an app that does not opt out
    registry = AppRegistry.from_dirs([]).with_subscription(aisouler)
    screen = (DATA / "screens/splash/48_douyin.xml").read_bytes()
    match = registry.match_popup("com.example.neverlisted", screen)
    assert match is not None and match.rule.id.startswith("gkd/GLOBAL/0/")


def test_functional_groups_act_only_when_named(capsys):
    path = str(SUBS / "664873568.sample.json5")
    plain = report(capsys, "--popup-rules", path)["subscriptions"][0]
    assert plain["kinds"]["functional"]["acting"] == 0 < plain["kinds"]["functional"]["rules"]
    named = report(capsys, "--popup-rules", path, "--popup-categories", "functional")["subscriptions"][0]
    assert named["kinds"]["functional"]["acting"] == named["kinds"]["functional"]["rules"]


def test_categories_switch_groups_on_whatever_the_file_says(capsys):
    path = str(SUBS / "lin-arm.sample.json5")
    off = report(capsys, "--popup-rules", path)["subscriptions"][0]
    on = report(capsys, "--popup-rules", path, "--popup-categories", "全屏广告,更新提示")["subscriptions"][0]
    assert on["kinds"]["ad"]["acting"] > off["kinds"]["ad"]["acting"]
    assert on["named"] == ["全屏广告", "更新提示"]


def test_an_unknown_category_is_one_line_with_the_files_categories(capsys):
    with pytest.raises(SystemExit) as caught:
        main(
            [
                "apps",
                "popups",
                "--report",
                "--popup-rules",
                str(SUBS / "gkd-kit.json5"),
                "--popup-categories",
                "开屏广吿",
            ]
        )
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert "names no category" in err and "开屏广告" in err and "Traceback" not in err


def test_the_popup_categories_setting_is_read_and_read_again_when_it_changes(monkeypatch):
    imported = load_subscription(SUBS / "lin-arm.sample.json5")  # no names given: the setting decides
    ad_rules = lambda: sum(1 for r in imported.imported if r.enabled and r.rule.kind == "ad")  # noqa: E731
    monkeypatch.setenv(CATEGORIES_ENV, "")
    assert imported.named == () and ad_rules() == 0
    monkeypatch.setenv(CATEGORIES_ENV, "全屏广告， 局部广告")
    assert imported.named == ("全屏广告", "局部广告") and ad_rules() > 0
