"""A global popup rule (written without seeing the app) leaves the app's content and first-run guides alone
(apps/global_guard.py): on the real held-out screens where the subscriptions' global 开屏广告 groups used to tap
(a word in a word game's list, an ad skipper's 自动跳过广告 settings row, a guide's SKIP beside NEXT) nothing fires,
and it still dismisses the real splash advert, a skip on a web promotion page, and adverts built for a fixed layer."""

from __future__ import annotations

from pathlib import Path

import pytest

from mobile_agent.apps import global_guard
from mobile_agent.apps.gkd_import import load_subscription
from mobile_agent.apps.registry import load_registry
from mobile_agent.screen.viewtree import ViewTree

DATA = Path(__file__).parents[2] / "data" / "real_popups"
HELD_OUT = DATA / "held_out"
SUBSCRIPTIONS = DATA / "subscriptions"

# (file, package, activity): real trees where a global rule of gkd-kit or ganlinte tapped before the guard
TOUCHED_BEFORE = [
    (
        "fdroid_agram_skip_word.xml",
        "us.achromaticmetaphor.agram",
        "us.achromaticmetaphor.agram.AnagramActivity",
    ),
    (
        "fdroid_just24_welcome_skip.xml",
        "com.chancehorizon.just24hoursplus",
        "com.chancehorizon.just24hoursplus.WelcomeActivity",
    ),
    ("adauto_skipper_settings.xml", "com.wisight.adauto", None),
]


def registry_with(name: str):
    return load_registry(None).with_subscription(
        load_subscription(SUBSCRIPTIONS / name, ["splash", "update"])
    )


@pytest.fixture(scope="module", params=["gkd-kit.json5", "ganlinte.json5"])
def registry(request):
    return registry_with(request.param)


@pytest.mark.parametrize("file,package,activity", TOUCHED_BEFORE, ids=lambda v: str(v))
def test_no_global_rule_acts_on_content_or_a_guide(registry, file, package, activity):
    xml = (HELD_OUT / file).read_bytes()
    assert registry.match_popup(package, xml, activity=activity) is None


def test_the_reasons_name_what_was_seen():
    gkd = registry_with("gkd-kit.json5")
    reasons = {
        file: " ".join(
            m.reason
            for m in gkd.explain_popups(package, (HELD_OUT / file).read_bytes(), activity=activity)
            if m.rule.id.startswith("gkd/GLOBAL/0/")
        )
        for file, package, activity in TOUCHED_BEFORE
    }
    assert "scrolling ListView" in reasons["fdroid_agram_skip_word.xml"]
    assert "scrolling ScrollView" in reasons["adauto_skipper_settings.xml"]
    assert "'NEXT'" in reasons["fdroid_just24_welcome_skip.xml"]


@pytest.mark.parametrize("name", ["gkd-kit.json5", "ganlinte.json5"])
def test_the_real_splash_advert_and_a_web_promotion_are_still_dismissed(name):
    registry = registry_with(name)
    for file, box in (
        ("qqmusic_splash_ad.xml", (873, 334, 1052, 428)),
        ("qqmusic_promo_page_skip.xml", (915, 259, 1083, 349)),  # its 跳过 sits in a scrolling WebView
    ):
        xml = (HELD_OUT / file).read_bytes()
        fired = [
            m
            for m in registry.explain_popups("com.tencent.qqmusic", xml)
            if m.fires and m.rule.id.startswith("gkd/GLOBAL/0/")
        ]
        assert fired, file
        p = fired[0].action.point
        assert box[0] <= p.x < box[2] and box[1] <= p.y < box[3], file


def _tree(inner: str) -> ViewTree:
    node = (
        '<node index="0" text="{text}" resource-id="" class="{cls}" package="p" content-desc="" '
        'clickable="true" scrollable="{scroll}" bounds="[0,0][1080,2400]">'
    )
    xml = (
        '<hierarchy rotation="0">'
        + node.format(text="", cls="android.widget.FrameLayout", scroll="false")
        + inner
        + "</node></hierarchy>"
    )
    tree = ViewTree.parse(xml)
    assert tree is not None
    return tree


def _leaf(text: str, bounds: str = "[900,80][1040,160]") -> str:
    return (
        f'<node index="0" text="{text}" resource-id="" class="android.widget.TextView" package="p" '
        f'content-desc="" clickable="true" scrollable="false" bounds="{bounds}" />'
    )


def _scroller(cls: str, inner: str) -> str:
    return (
        f'<node index="0" text="" resource-id="" class="{cls}" package="p" content-desc="" clickable="false" '
        f'scrollable="true" bounds="[0,0][1080,2400]">{inner}</node>'
    )


@pytest.mark.parametrize(
    "cls,inside",
    [
        ("androidx.recyclerview.widget.RecyclerView", "RecyclerView"),
        ("android.widget.ScrollView", "ScrollView"),
        ("android.view.View", "View"),  # a Compose lazy list
        ("android.webkit.WebView", None),
        ("androidx.viewpager.widget.ViewPager", None),
    ],
)
def test_which_scrolling_ancestors_count_as_content(cls, inside):
    tree = _tree(_scroller(cls, _leaf("跳过")))
    (target,) = [e for e in tree.elements if e.text == "跳过"]
    assert global_guard.scrolling_container(target) == inside


@pytest.mark.parametrize(
    "label,guide",
    [
        ("NEXT", True),
        ("下一步", True),
        ("Get started", True),
        ("下一步 >", True),
        ("立即体验", False),
        ("跳过 3", False),
    ],
)
def test_forward_controls(label, guide):
    tree = _tree(_leaf("跳过") + _leaf(label, "[800,2200][1040,2300]"))
    assert (global_guard.forward_control(tree) is not None) is guide
