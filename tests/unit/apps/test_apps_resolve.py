"""Name resolution: exact -> alias -> normalised -> suggestions; launching by registry, then by the phone's packages."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobile_agent.apps.names import normalise
from mobile_agent.apps.registry import AppNotInstalled, UnknownApp
from mobile_agent.apps.schema import AppManifest
from mobile_agent.errors import UserError


@pytest.mark.parametrize(
    "name", ["微信", "WeChat", "weixin", " wechat ", "ＷｅＣｈａｔ", "We-Chat!", "com.tencent.mm"]
)
def test_wechat_names(registry, name):
    assert registry.resolve(name).package == "com.tencent.mm"


def test_12306_and_its_full_name_are_the_same_app(registry):
    assert registry.resolve("12306") is registry.resolve("铁路12306")
    assert registry.resolve("12306").package == "com.MobileTicket"


def test_meituan_waimai_is_not_meituan(registry):
    assert registry.resolve("美团外卖").id != registry.resolve("美团").id
    assert registry.resolve("美团 外卖").package == "com.sankuai.meituan.takeoutnew"


@pytest.mark.parametrize(
    ("name", "package"),
    [
        ("B站", "tv.danmaku.bili"),
        ("支付宝", "com.eg.android.AlipayGphone"),
        ("Alipay", "com.eg.android.AlipayGphone"),
        ("QQ音乐", "com.tencent.qqmusic"),
        ("qq", "com.tencent.mobileqq"),
        ("小红书", "com.xingin.xhs"),
        ("设置", "com.android.settings"),
        ("闹钟", "com.android.deskclock"),
    ],
)
def test_aliases(registry, name, package):
    assert registry.resolve(name).package == package


def test_unknown_name_offers_suggestions(registry):
    with pytest.raises(UnknownApp) as caught:
        registry.resolve("美团外")
    assert {"美团", "美团外卖"} <= set(caught.value.suggestions)
    assert isinstance(caught.value, UserError) and "美团外卖" in caught.value.hint


def test_misspelt_name_suggests_the_app(registry):
    with pytest.raises(UnknownApp) as caught:
        registry.resolve("wexin")
    assert caught.value.suggestions[0] == "微信"


def test_nothing_alike_gives_no_suggestions_but_a_hint(registry):
    with pytest.raises(UnknownApp) as caught:
        registry.resolve("zzzzqqqqxxxx")
    assert caught.value.suggestions == [] and "apps list" in caught.value.hint


def test_normalise_folds_width_case_space_and_punctuation():
    assert normalise(" Ｗｅ Chat！") == "wechat"
    assert normalise("铁路 12306") == "铁路12306"
    assert normalise("·—…") == ""


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30))
def test_resolve_returns_a_manifest_or_raises_unknown_app(registry, name):
    try:
        found = registry.resolve(name)
    except UnknownApp as exc:
        assert isinstance(exc.suggestions, list)
    else:
        assert isinstance(found, AppManifest)


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["微信", "淘宝", "12306", "Alipay", "B站", "美团外卖"]),
    st.sampled_from(["", " ", "　", "!", "·"]),
)
def test_resolve_ignores_padding(registry, name, pad):
    assert registry.resolve(pad + name + pad) == registry.resolve(name)


# ---- resolve_launch ----------------------------------------------------------------------------------------------
def test_launch_uses_the_registry_first(registry):
    assert registry.resolve_launch("微信", {"com.tencent.mm", "com.android.settings"}) == "com.tencent.mm"


def test_launch_picks_the_installed_vendor_variant(registry):
    assert registry.resolve_launch("相册", {"com.miui.gallery", "com.android.settings"}) == "com.miui.gallery"
    target = registry.resolve_launch_target("电话", {"com.android.contacts"})
    assert target.package == "com.android.contacts" and target.activity.endswith("TwelveKeyDialer")


def test_launch_with_unknown_installed_set_returns_the_primary_package(registry):
    assert registry.resolve_launch("相册", set()) == "com.android.gallery3d"


def test_launch_of_a_known_app_that_is_not_installed(registry):
    with pytest.raises(AppNotInstalled) as caught:
        registry.resolve_launch("淘宝", {"com.tencent.mm"})
    assert "not installed" in caught.value.message and isinstance(caught.value, UnknownApp)


def test_launch_falls_back_to_the_phones_packages(registry):
    installed = {"com.example.notes", "org.mozilla.firefox", "com.tencent.mm"}
    assert registry.resolve_launch("org.mozilla.firefox", installed) == "org.mozilla.firefox"
    assert registry.resolve_launch("Firefox", installed) == "org.mozilla.firefox"
    assert (
        registry.resolve_launch("我的笔记", installed, labels={"com.example.notes": "我的笔记"})
        == "com.example.notes"
    )


def test_launch_of_an_unknown_name_raises_with_suggestions(registry):
    with pytest.raises(UnknownApp) as caught:
        registry.resolve_launch("淘宝网站", {"com.example.notes"})
    assert "淘宝" in caught.value.suggestions


def test_by_package_and_hints(registry):
    assert registry.by_package("com.tencent.mm").id == "wechat"
    assert registry.by_package("com.example.unknown") is None
    assert "通讯录" in registry.hints("com.tencent.mm")
    assert "logged-in" in registry.hints("com.tencent.mm")
    assert registry.hints("com.example.unknown") is None
