"""The shipped popup rules on real material (tests/data/real_popups): behaviour, not coverage shares.

Coverage shares are measured by bench/popups_real.py; here: no rule fires on an ordinary screen, whenever a rule
fires on a popup screen it does what the screen expects, each manifest rule fires on the trees its sources name,
and no popup rule taps a consequential element.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mobile_agent.actions import Action, ActionKind
from mobile_agent.apps.registry import AppRegistry, load_registry
from mobile_agent.errors import ConfigError
from mobile_agent.screen.viewtree import ViewTree

DATA = Path(__file__).parents[2] / "data" / "real_popups"
SCREENS = yaml.safe_load((DATA / "screens.yaml").read_text(encoding="utf-8"))
ORDINARY = [s for s in SCREENS if s["kind"] == "ordinary"]
POPUPS = [s for s in SCREENS if s["kind"] != "ordinary"]


@pytest.fixture(scope="module")
def registry() -> AppRegistry:
    return load_registry(None)


def _match(registry: AppRegistry, screen: dict):
    xml = (DATA / screen["file"]).read_bytes()
    return registry.match_popup(screen["package"], xml, activity=screen.get("activity"))


@pytest.mark.parametrize("screen", ORDINARY, ids=lambda s: s["file"])
def test_no_rule_fires_on_an_ordinary_screen(registry, screen):
    assert _match(registry, screen) is None


def _expected_action(screen: dict) -> Action | None:
    expect = screen["expect"]
    if expect == "none":
        return None
    if expect == "back":
        return Action.press("back")
    return Action.tap(*expect["tap"])


@pytest.mark.parametrize("screen", POPUPS, ids=lambda s: s["file"])
def test_a_rule_that_fires_does_what_the_screen_expects(registry, screen):
    match = _match(registry, screen)
    expected = _expected_action(screen)
    if match is None:
        return  # not covered: counted by the bench, not a wrong action
    assert expected is not None, f"{match.rule.id} fired where nothing should"
    if expected.kind is ActionKind.KEY:
        assert match.action == expected, match.rule.id
        return
    assert match.action.kind is ActionKind.TAP, match.rule.id
    tree = ViewTree.parse((DATA / screen["file"]).read_bytes())
    target = expected.point
    # the tap lands on the element whose centre the screen names (a rule may target the node or its centre)
    hits = [
        e.bounds
        for e in tree.elements
        if e.bounds is not None
        and abs(e.bounds.centre.x - target.x) <= 1
        and abs(e.bounds.centre.y - target.y) <= 1
    ]
    p = match.action.point
    assert (abs(p.x - target.x) <= 3 and abs(p.y - target.y) <= 3) or any(
        b.left <= p.x < b.right and b.top <= p.y < b.bottom for b in hits
    ), (match.rule.id, p, target)


def _cited_trees(rule) -> list[str]:
    out = []
    for source in rule.sources:
        if "tests/data/real_popups/screens/" in source and source.rstrip().endswith(".xml"):
            out.append("screens/" + source.rsplit("tests/data/real_popups/screens/", 1)[1].strip())
    return out


def test_every_manifest_rule_cites_a_source_and_fires_on_the_trees_it_cites(registry):
    by_file = {s["file"]: s for s in SCREENS}
    apps_with_rules = [m for m in registry if m.popups]
    assert len(apps_with_rules) >= 40
    for manifest in apps_with_rules:
        for rule in manifest.popups:
            assert rule.sources, f"{manifest.id}:{rule.id} cites no source"
            for tree_file in _cited_trees(rule):
                screen = by_file[tree_file]
                assert screen["package"] in manifest.packages, (manifest.id, tree_file)
                match = _match(registry, screen)
                if screen["expect"] == "none":
                    assert match is None or match.rule.id != rule.id
                else:
                    assert match is not None and match.rule.id == rule.id, (manifest.id, rule.id, tree_file)


def test_no_popup_rule_taps_a_consequential_element(registry):
    for screen in SCREENS:
        match = _match(registry, screen)
        if match is not None and match.action.kind is ActionKind.TAP:
            assert registry.match_consequential(screen["package"], match.element.as_dict()) is None


def test_a_rule_whose_target_is_consequential_does_not_fire(tmp_path):
    (tmp_path / "demo.yaml").write_text(
        """
id: demo
name: Demo
package: com.example.demo
category: tools
source: {kind: common_knowledge}
popups:
  - id: bad
    selector: '[text="确认支付"]'
""",
        encoding="utf-8",
    )
    registry = AppRegistry.load([tmp_path])
    xml = (
        "<hierarchy><node index='0' text='确认支付' resource-id='' class='android.widget.Button' "
        "package='com.example.demo' content-desc='' clickable='true' bounds='[0,0][200,100]'/></hierarchy>"
    )
    assert registry.match_popup("com.example.demo", xml) is None
    explained = registry.explain_popups("com.example.demo", xml)
    assert "consequential" in explained[0].reason


def test_a_bad_selector_in_a_manifest_names_file_and_line(tmp_path):
    (tmp_path / "demo.yaml").write_text(
        "id: demo\nname: Demo\npackage: com.example.demo\ncategory: tools\nsource: {kind: common_knowledge}\n"
        "popups:\n  - id: ok\n    selector: '[text=\"跳过\"]'\n  - id: bad\n    selector:\n"
        "      - '[text=\"a\"]'\n      - '[text^=null]'\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        AppRegistry.load([tmp_path])
    assert caught.value.line == 12
    assert "popups[1].selector[1]" in caught.value.message and "column 6" in caught.value.message
