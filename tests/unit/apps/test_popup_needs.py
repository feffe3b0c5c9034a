"""The prefilter in front of popup matching (apps/query/needs.py): it skips rules that cannot fire, never one
that would, so match_popup gives what trying every rule in order gives."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobile_agent.apps.gkd_import import load_subscription
from mobile_agent.apps.query.evaluate import find_target
from mobile_agent.apps.query.needs import ScreenWords, selector_needs
from mobile_agent.apps.query.parser import parse_selector
from mobile_agent.apps.registry import AppRegistry, load_registry
from mobile_agent.screen.viewtree import ViewTree

DATA = Path(__file__).parents[2] / "data"
DUMPS = sorted((DATA / "real_popups" / "screens").rglob("*.xml")) + sorted(
    (DATA / "real_viewtrees").glob("*.xml")
)
PACKAGE_RE = re.compile(rb'package="([^"]+)"')


def _tree(*texts: str) -> ViewTree:
    nodes = "".join(
        f'<node index="{i}" text="{t}" resource-id="com.x:id/n{i}" class="android.widget.TextView" '
        f'package="com.x" content-desc="" bounds="[0,{i * 10}][100,{i * 10 + 10}]" />'
        for i, t in enumerate(texts)
    )
    tree = ViewTree.parse(f"<hierarchy rotation='0'>{nodes}</hierarchy>")
    assert tree is not None
    return tree


def _could_match(tree: ViewTree, selector: str) -> bool:
    return ScreenWords.of(tree).satisfy(selector_needs(parse_selector(selector)))


@pytest.fixture(scope="module")
def registries() -> list[AppRegistry]:
    plain = load_registry(None)
    gkd = plain.with_subscription(load_subscription(DATA / "real_popups" / "gkd" / "mixed.json5"))
    return [plain, gkd]


@pytest.mark.parametrize("dump", DUMPS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_match_popup_is_the_first_rule_that_fires_when_all_are_tried(registries, dump):
    xml = dump.read_bytes()
    own = PACKAGE_RE.search(xml)
    for registry in registries:
        for package in {own.group(1).decode() if own else "com.x", "com.unknown.app", *registry._imported}:
            for activity in (None, "com.x.SplashActivity"):
                tried = registry.explain_popups(package, xml, activity=activity)
                first = next((m for m in tried if m.fires), None)
                match = registry.match_popup(package, xml, activity=activity)
                if first is None:
                    assert match is None
                else:
                    assert match is not None and (match.rule.id, match.action) == (
                        first.rule.id,
                        first.action,
                    )


def test_a_screen_without_the_rule_text_is_ruled_out_and_one_with_it_is_not():
    assert not _could_match(_tree("首页", "我的"), '[text="跳过"]')
    assert _could_match(_tree("首页", "跳过"), '[text="跳过"]')
    assert _could_match(_tree("请跳过广告"), '[text*="跳过"]')
    assert not _could_match(_tree("首页"), '[text="跳过" || text="关闭"]')
    assert _could_match(_tree("关闭"), '[text="跳过" || text="关闭"]')
    assert _could_match(_tree("首页"), '[text!="跳过"]')  # a negation needs nothing


def test_anchored_patterns_still_see_each_element_on_its_own():
    assert _could_match(_tree("首页", "跳过 5s", "我的"), r'[text~="^跳过 \\d+s$"]')
    assert not _could_match(_tree("首页", "不跳过"), r'[text~="^跳过"]')
    assert _could_match(_tree("ok", "x"), r'[text~="(?=x)x"]')  # a look-around needs nothing


_WORDS = st.sampled_from(["跳过", "跳过 3", "关闭", "Skip", "skip ad", " 5s", "", "同意", "a\nb"])
_SELECTORS = st.sampled_from(
    [
        '[text="跳过"]',
        '[text^="跳过"]',
        '[text$="5s"]',
        '[text*="ip"]',
        r'[text~="跳过 ?\\d?"]',
        r'[text~="^\\s*(?:Skip|跳过)\\s*\\d*$"]',
        r'[text~=".*\\bad"]',
        r'[text~="a$"]',
        '[text="同意" || text="关闭"] + [text="跳过"]',
        '[text="关闭" && text.length<3]',
        '[vid="n1"]',
        'TextView[text*="5"]',
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_WORDS, min_size=1, max_size=5), _SELECTORS)
def test_a_selector_that_matches_is_never_ruled_out(texts, selector):
    tree = _tree(*(t.replace("\n", "&#10;") for t in texts))
    if find_target(tree, selector) is not None:
        assert _could_match(tree, selector)
