"""The popup selector language: parsing (with clear errors) and matching on small view trees."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobile_agent.apps.query.evaluate import find_target, targets
from mobile_agent.apps.query.parser import parse_selector
from mobile_agent.apps.query.syntax import SelectorError
from mobile_agent.screen.viewtree import ViewTree

PKG = "com.example.app"


def node(children: str = "", **attrs: str) -> str:
    base = {
        "index": "0",
        "text": "",
        "resource-id": "",
        "class": "android.widget.FrameLayout",
        "package": PKG,
    }
    base.update(
        {"content-desc" if k == "desc" else k.rstrip("_").replace("_", "-"): v for k, v in attrs.items()}
    )
    base.setdefault("bounds", "[0,0][100,100]")
    text = " ".join(f'{k}="{v}"' for k, v in base.items())
    return f"<node {text}>{children}</node>"


def tree(*tops: str) -> ViewTree:
    parsed = ViewTree.parse("<hierarchy rotation='0'>" + "".join(tops) + "</hierarchy>")
    assert parsed is not None
    return parsed


# A dialog: title, message, then a button row with 取消 (index 0) and 立即更新 (index 1); a close icon first.
DIALOG = tree(
    node(
        node(
            bounds="[900,700][980,780]",
            index="0",
            class_="android.widget.ImageView",
            desc="关闭",
            clickable="true",
        )
        + node(text="发现新版本", index="1", class_="android.widget.TextView", bounds="[100,800][900,880]")
        + node(
            node(
                text="取消",
                index="0",
                class_="android.widget.TextView",
                resource_id=f"{PKG}:id/btn_cancel",
                clickable="true",
                bounds="[100,1400][500,1500]",
            )
            + node(
                text="立即更新",
                index="1",
                class_="android.widget.Button",
                clickable="true",
                bounds="[580,1400][980,1500]",
            ),
            index="2",
            class_="android.widget.LinearLayout",
            bounds="[100,1400][980,1500]",
        ),
        resource_id=f"{PKG}:id/dialog_root",
        bounds="[80,680][1000,1520]",
    )
)


def label(selector: str) -> str | None:
    hit = find_target(DIALOG, selector)
    return None if hit is None else (hit.text or hit.content_desc or hit.resource_id or hit.class_name)


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ('[text="取消"]', "取消"),
        ('[text^="发现"]', "发现新版本"),
        ('[text*="新版"]', "发现新版本"),
        ('[text$="版本"]', "发现新版本"),
        ('[text~="发现.版本"]', "发现新版本"),
        ('[text~="新版本"]', None),  # a regex matches the whole text
        ('[text!="取消"][clickable=true][class="android.widget.Button"]', "立即更新"),
        ('[vid="btn_cancel"]', "取消"),
        ('[id="com.example.app:id/btn_cancel"]', "取消"),
        ("[text.length=2][clickable=true]", "取消"),
        ("[text.length>3]", "发现新版本"),
        ("Button", "立即更新"),  # a bare class name matches the last part of the class
        ('ImageView[desc="关闭"]', "关闭"),
        ('[text="取消"] + [text="立即更新"]', "立即更新"),  # + : the left one is an earlier sibling
        ('@[text="取消"] + [text="立即更新"]', "取消"),  # @ moves the target
        ('[text="立即更新"] - [text="取消"]', "取消"),  # - : the left one is a later sibling
        ('@[desc="关闭"] + [text="发现新版本"]', "关闭"),  # the close icon next to the title
        ('@[desc="关闭"] +2 LinearLayout', "关闭"),
        ('@[desc="关闭"] +(1,2) LinearLayout', "关闭"),
        ('@[desc="关闭"] +3 LinearLayout', None),
        ('[desc="关闭"] +n LinearLayout > [text="立即更新"]', "立即更新"),
        ('[vid="dialog_root"] >2 [text="取消"]', "取消"),  # >2: grandparent
        ('[vid="dialog_root"] > [text="取消"]', None),  # > alone: the parent only
        ('[vid="dialog_root"] >n [text="取消"]', "取消"),
        ('[vid="dialog_root"] [text="取消"]', "取消"),  # a space alone: any ancestor
        ('[text="取消"] < LinearLayout', "android.widget.LinearLayout"),  # < : the first child
        ('[text="立即更新"] < LinearLayout', None),
        ('[text="立即更新"] <2 LinearLayout', "android.widget.LinearLayout"),
        ('[text="立即更新"] <n @LinearLayout', "android.widget.LinearLayout"),
        ('[text="取消" || text="以后再说"][clickable=true]', "取消"),
        ('[!(text="取消") && text.length=4]', "立即更新"),
        ('[text="以后再说" || (vid="btn_cancel" && clickable=true)]', "取消"),
        ('[text=null][desc="关闭"]', "关闭"),
        ("[text!=null][index=1][clickable=true]", "立即更新"),
        ('[desc^="关"]', "关闭"),
        ('[text^="x"]', None),
        ('[width>=400][height<=100][text^="立即"]', "立即更新"),
        ("[childCount=2]", "android.widget.LinearLayout"),
        ("[depth=2][index=0]", "取消"),
    ],
)
def test_selectors_pick_the_documented_node(selector, expected):
    assert label(selector) == expected


def test_null_attributes_fail_every_operator_but_equality():
    assert label('[desc="关闭"][text^=""]') is None  # text is null on the icon
    assert label('[desc="关闭"][text!="取消"]') == "关闭"  # != holds against null


def test_vid_is_null_for_another_packages_id():
    other = tree(node(resource_id="com.byted.pangle:id/tt_splash_skip_btn", text="跳过"))
    assert find_target(other, '[vid="tt_splash_skip_btn"]') is None
    assert find_target(other, '[id$=":id/tt_splash_skip_btn"]') is not None


def test_siblings_use_the_index_attribute_not_the_xml_position():
    # index 1 was left out of the dump: 广告 at index 2 is two siblings after the icon at index 0
    row = tree(node(node(index="0", class_="android.widget.ImageView") + node(index="2", text="广告")))
    assert find_target(row, '@ImageView +2 [text="广告"]') is not None
    assert find_target(row, '@ImageView + [text="广告"]') is None


def test_invisible_nodes_match_as_in_gkd_and_a_visible_target_is_preferred():
    hidden = tree(
        node(text="跳过", index="0", **{"visible_to_user": "false"})
        + node(text="跳过", index="1", bounds="[0,0][50,50]")
    )
    assert find_target(hidden, "[visibleToUser=false]").text == "跳过"  # GKD rules test for hidden nodes
    assert find_target(hidden, '[text="跳过"]').bounds.right == 100  # the first, hidden one
    assert find_target(hidden, '[text="跳过"]', visible_first=True).bounds.right == 50


def test_every_match_is_listed_in_document_order():
    assert [e.text for e in targets(DIALOG, "[clickable=true][text!=null]")] == ["取消", "立即更新"]


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("", "empty"),
        ('[text="a"', "unclosed"),
        ('[text="a]', "unclosed string"),
        ('[txt="a"]', "unknown attribute 'txt'"),
        ("[text>1]", "integer attribute"),
        ('[clickable="true"]', "boolean"),
        ('[text.length="3"]', "integer, compared with a string"),
        ("[text^=null]", "null"),
        ('[text="a"]>[text="b"]', "unexpected"),
        ('[text="a"] > ', "segment after"),
        ('[text="a\\q"]', "bad escape"),
        ('[text~="("]', "bad regular expression"),
        ('[text="a"] +0 [text="b"]', "start at 1"),
        ('[text="a"] +(x) [text="b"]', "bad relation offset"),
        ("[text=]", "expected a value"),
    ],
)
def test_bad_selectors_say_what_and_where(selector, message):
    with pytest.raises(SelectorError) as caught:
        parse_selector(selector)
    assert message in str(caught.value)
    assert not caught.value.unsupported
    assert "column" in str(caught.value)


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("[text~=desc.substring(0, 2)]", "must be a string literal"),
        ('TextView:is([text="a"])', "unexpected ':'"),
        ('[text="a"] || [text="b"]', "in ( )"),
        ("[vid.size=3]", "no property 'size'"),
        ("[text.length.length=1]", "integer has no property"),
        ("[width.div(0, 1)>1]", "unknown method div() with 2 argument(s)"),
        ('[text.substring("a")="x"]', "substring() takes integer, not string"),
        ("[getChild(0)()=null]", "cannot be called again"),
        ("[!text=null]", "! must be followed by ("),
        ('[text="a"] +(-n) [text="b"]', "allows no position"),
        ('[text="a"] +(n+) [text="b"]', "bad relation offset"),
        ("[parent>1]", "needs an integer attribute"),
        ("[parent=1]", "compared with an integer"),
        ("[true=text]", "boolean, compared with a string"),
    ],
)
def test_what_gkd_itself_rejects_is_an_invalid_selector(selector, message):
    with pytest.raises(SelectorError) as caught:
        parse_selector(selector)
    assert message in str(caught.value)
    assert not caught.value.unsupported


def test_only_what_no_phone_has_is_unsupported():
    with pytest.raises(SelectorError) as caught:
        parse_selector("[_id=3] > [text='a']")
    assert caught.value.unsupported and "web inspector" in caught.value.message


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("[]()@=!^*$~<>+-n|&., \"'`\\0123456789abtexidvcsw跳过")), max_size=60
    )
)
def test_parser_fuzz_raises_only_selector_error(text):
    try:
        selector = parse_selector(text)
    except SelectorError:
        return
    find_target(DIALOG, selector)  # whatever parses also runs
