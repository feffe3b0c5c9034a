"""The held-out trees (tests/data/real_popups/held_out): every one traceable to its source and labelled; the shipped
rules touch none of the screens where nothing should act; a subscription's global splash rule dismisses a real
splash advert of an app it has no rule for. Coverage shares are bench/popups_real.py's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from mobile_agent.apps.gkd_import import load_subscription
from mobile_agent.apps.registry import load_registry
from mobile_agent.screen.viewtree import ViewTree

HELD_OUT = Path(__file__).parents[2] / "data" / "real_popups" / "held_out"
ENTRIES = yaml.safe_load((HELD_OUT / "sources.yaml").read_text(encoding="utf-8"))
KINDS = {"splash", "update", "promo", "privacy", "permission", "rating", "other_popup", "intro", "ordinary"}
QUIET = [e for e in ENTRIES if e["expect"] == "none"]
SUBSCRIPTIONS = HELD_OUT.parent / "subscriptions"


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["file"])
def test_every_tree_is_sourced_labelled_and_parses(entry):
    source = entry["source"]
    assert source["repository"].count("/") == 1 and source["path"]
    assert re.fullmatch(r"[0-9a-f]{40}", source["commit"])
    assert entry["kind"] in KINDS
    tree = ViewTree.parse((HELD_OUT / entry["file"]).read_bytes())
    assert tree is not None and tree.elements
    expect = entry["expect"]
    if entry["kind"] in ("ordinary", "intro"):
        assert expect == "none"
    elif isinstance(expect, dict):
        left, top, right, bottom = expect["tap_in"]
        boxes = [e.bounds for e in tree.elements if e.bounds is not None]
        assert any((b.left, b.top, b.right, b.bottom) == (left, top, right, bottom) for b in boxes)
    else:
        assert expect == "unlabelled"


def test_no_tree_a_rule_was_written_from_is_held_out():
    manifests = Path(__file__).parents[3] / "apps"
    cited = " ".join(p.read_text(encoding="utf-8") for p in manifests.glob("*.yaml"))
    for entry in ENTRIES:
        assert entry["source"]["path"] not in cited, entry["file"]


@pytest.fixture(scope="module")
def shipped():
    return load_registry(None)


@pytest.mark.parametrize("entry", QUIET, ids=lambda e: e["file"])
def test_the_shipped_rules_touch_no_screen_where_nothing_should_act(shipped, entry):
    xml = (HELD_OUT / entry["file"]).read_bytes()
    assert shipped.match_popup(entry["package"], xml, activity=entry.get("activity")) is None


@pytest.mark.parametrize("name", ["gkd-kit.json5", "ganlinte.json5", "aisouler.sample.json5"])
def test_a_global_splash_rule_dismisses_a_real_splash_advert(name):
    (splash,) = [e for e in ENTRIES if e["kind"] == "splash" and e["package"] == "com.tencent.qqmusic"]
    registry = load_registry(None).with_subscription(load_subscription(SUBSCRIPTIONS / name, ["splash"]))
    shared_only = [(app, rule) for app, rule in registry.popup_rules("com.tencent.qqmusic") if app is None]
    assert any(rule.id.startswith("gkd/GLOBAL/") for _, rule in shared_only)
    xml = (HELD_OUT / splash["file"]).read_bytes()
    outcomes = [
        m
        for m in registry.explain_popups("com.tencent.qqmusic", xml)
        if m.fires and m.rule.id.startswith("gkd/GLOBAL/")
    ]
    assert outcomes, "no global splash rule fires on the real splash"
    left, top, right, bottom = splash["expect"]["tap_in"]
    point = outcomes[0].action.point
    assert left <= point.x < right and top <= point.y < bottom
