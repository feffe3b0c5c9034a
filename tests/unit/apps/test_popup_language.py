"""The whole GKD selector language (gkd-kit/docs guide/selector.md and guide/node.md) on small trees written for
these tests: relations with every offset form, values of other nodes, methods, selector-level logic, Java regex."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobile_agent.apps.query.evaluate import find_target, targets
from mobile_agent.apps.query.javaregex import java_regex, translate
from mobile_agent.apps.query.parser import parse_selector
from mobile_agent.apps.query.syntax import Offsets
from mobile_agent.screen.viewtree import ViewTree

PKG = "com.example.app"


def n(
    label: str, *children: str, index: int = 0, cls: str = "android.widget.FrameLayout", **attrs: str
) -> str:
    """A node whose text is ``label`` (its name in the assertions)."""
    extra = " ".join(f'{k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return (
        f'<node index="{index}" text="{label}" resource-id="{PKG}:id/{label}" class="{cls}" package="{PKG}" '
        f'content-desc="" clickable="false" bounds="[0,0][100,100]" {extra}>{"".join(children)}</node>'
    )


def tree(*tops: str) -> ViewTree:
    parsed = ViewTree.parse("<hierarchy rotation='0'>" + "".join(tops) + "</hierarchy>")
    assert parsed is not None
    return parsed


# root
# ├── a (0)            a has a1, a2; a1 has a11
# │   ├── a1 (0)
# │   │   └── a11 (0)
# │   └── a2 (1)
# ├── b (1)
# ├── c (2)
# └── d (3)
T = tree(
    n(
        "root",
        n("a", n("a1", n("a11")), n("a2", index=1)),
        n("b", index=1),
        n("c", index=2, cls="android.widget.ImageView"),
        n("d", index=3),
    )
)


def hit(selector: str, t: ViewTree = T) -> str | None:
    found = find_target(t, selector)
    return None if found is None else found.text


def every(selector: str, t: ViewTree = T) -> list[str]:
    return [e.text for e in targets(t, selector)]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        # << is pre-order among the descendants, 1-based: a1, a11, a2
        ('@[text="a1"] << [text="a"]', "a1"),
        ('@[text="a11"] <<2 [text="a"]', "a11"),
        ('@[text="a2"] <<3 [text="a"]', "a2"),
        ('@[text="a2"] <<2 [text="a"]', None),
        ('@[text="a2"] <<n [text="a"]', "a2"),
        ('@[text="a11"] <<(1,2) [text="a"]', "a11"),
        ("@[text=\"d\"] <<(2n+1) [text='root']", "d"),  # root's descendants: a a1 a11 a2 b c d; d is the 7th
        ("@[text=\"d\"] <<(2n) [text='root']", None),
        # polynomial and tuple offsets on siblings and ancestors
        ('[text="a"] +3 [text="d"]', "d"),
        ('@[text="a"] +(3n) [text="d"]', "a"),
        ('@[text="b"] +2n [text="d"]', "b"),
        ('@[text="a"] +2n [text="d"]', None),  # 3 back: not even
        ('@[text="c"] +(-n+2) [text="d"]', "c"),  # (1)
        ('@[text="b"] +(3-n) [text="d"]', "b"),  # (1,2)
        ('@[text="a"] +(3-n) [text="d"]', None),
        ('@[text="root"] >(n+1) [text="a11"]', "root"),  # 2, 3, ...: a1 is 1 up, excluded
        ('@[text="a1"] >(n+1) [text="a11"]', None),
        ('@[text="d"] -(2n+1) [text="a"]', "d"),
        # -> : a node matched earlier (k segments to the right)
        ('@[text="root"] ->2 [text="a1"] > [text="a11"]', None),
        ('[text="a"] > @[text="a1"] ->1 [text="a11"] < [text="a1"]', "a1"),
        ('@[text="a11"] ->1 [text="a1"] > [text="a11"]', "a11"),
        ('@[text="a11"] ->n [text="a"] >2 [text="a11"]', "a11"),
        # values of other nodes, methods, contexts
        ("[parent.childCount=4][index=parent.childCount.minus(1)]", "d"),
        ('[getChild(0).getChild(0).text="a11"]', "a"),
        ('[getChild(1).text="a2"][childCount=2]', "a"),
        ("[2=parent.childCount][index=1]", "a2"),  # a literal on the left
        ('[parent.parent.text="root"][childCount=0][index>0]', "a2"),
        ('[text="a"] > @[prev.text="a11"] > [text="a11"]', "a1"),
        ('@[getPrev(0).text="a11"] > [text="a11"]', "a1"),
        ('@[getPrev(1).text="a11"] > [text="a1"] > [text="a11"]', "a"),
        ('@[getPrev(1).text="a1"] > [text="a1"] > [text="a11"]', None),
        ('[current.text="c"]', "c"),
        ('[text.length=3][text.substring(0, 2)="a1"]', "a11"),
        ('[text.at(-1)="2"]', "a2"),
        ('[text.get(0)="d"]', "d"),
        ('[text.indexOf("1")=1][text.length=2]', "a1"),
        ("[text.substring(1).toInt()=11]", "a11"),
        ("[index.plus(1).times(2).div(4).rem(3)=2][text!=null]", "d"),  # (3+1)*2/4 % 3 = 2
        ("[childCount.more(3)=true]", "root"),
        ('[index.toString()="2"]', "c"),
        ('[index.toString(2)="11"]', "d"),
        ('[clickable.not()=true][clickable.or(true)=true][clickable.toInt()=0][text="root"]', "root"),
        ('[clickable.ifElse("x", text)="root"]', "root"),
        ('[equal(text, "c")=true]', "c"),
        ('[notEqual(index, 0)=true][parent.text="root"]', "b"),
        ("[parent=null]", "root"),
        ("[parent!=null][childCount=1]", "a1"),
        ('[vid="a2"]', "a2"),
        ('[editable=false][text="b"]', "b"),
        # null propagates: nothing on a missing node, and a method on null is null
        ('[getChild(9).text=null][text="b"]', "b"),
        ('[getChild(9).text="x"]', None),
        ('[text.substring(9)=null][text="c"]', "c"),
        ('[width.div(0)=null][text="c"]', "c"),
    ],
)
def test_documented_forms_pick_the_documented_node(selector, expected):
    assert hit(selector) == expected, selector


def test_descendant_positions_follow_pre_order():
    root = "[text='root']"
    assert [hit(f"@* <<{k} {root}") for k in range(1, 9)] == ["a", "a1", "a11", "a2", "b", "c", "d", None]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ('([text="zz"]) || ([text="b"])', ["b"]),
        ('([text="a"] > [text="a1"]) || ([text="b"])', ["a1", "b"]),
        ('([childCount=0]) && ([parent.text="a"])', ["a2"]),
        ('([childCount=0]) && !(([text="a11"]) || ([text="a2"]))', ["b", "c", "d"]),
        ("!([childCount=0]) && ([parent!=null])", ["a", "a1"]),
        ('([text="a2"]) || ([text="b"]) && ([index=1])', ["a2", "b"]),  # && binds tighter
        ('(@[text="a"] > [text="a1"]) || ([text="zz"])', ["a"]),  # @ inside a side
        ('((([text="b"])))', ["b"]),
        ('( [text="b"] )', ["b"]),
    ],
)
def test_selector_level_logic(selector, expected):
    assert every(selector) == expected


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("(?is).*skip.*", "SKIP 5", True),
        ("(?is).*skip.*", "a\nSkip", True),
        ("skip.*", "Skip", False),
        ("a(?i)bc", "aBC", True),
        ("a(?i)bc", "ABC", False),
        ("(a(?i)b)c", "aBC", False),
        ("\\Qa.b\\E", "a.b", True),
        ("\\Qa.b\\E", "axb", False),
        ("\\p{Alpha}+", "abc", True),
        ("\\p{Alpha}+", "ab1", False),
        ("[\\p{Digit}s]+", "12s", True),
        ("(?<n>a)\\k<n>", "aa", True),
        ("跳过\\s*\\d{0,2}", "跳过 5", True),
        ("[0-9]+s", "5s", True),
        ("[0-9]+s", "5s跳过", False),  # matches is a whole-text match
        ("(?d)a", "a", True),
        ("(?U)\\w+", "跳过", True),
        ("a*+a", "aaa", False),  # possessive, as in Java
    ],
)
def test_java_regex(pattern, text, matches):
    assert (java_regex(pattern).fullmatch(text) is not None) == matches, translate(pattern)


def test_regex_in_a_selector_with_json5_style_escapes():
    t = tree(n("root", n("Skip 3"), n("跳过5", index=1)))
    assert hit('[text~="(?is)skip \\\\d"]', t) == "Skip 3"
    assert hit('[text!~="(?is).*skip.*"][parent!=null]', t) == "跳过5"


@settings(max_examples=200, deadline=None)
@given(st.integers(-4, 4), st.integers(-6, 8), st.integers(1, 30))
def test_polynomial_offsets_are_the_documented_set(a, b, k):
    values = {a * m + b for m in range(1, 60)}
    expected = k in {v for v in values if v >= 1}
    text = "(" + (f"{a}n" if a else "") + (f"{b:+d}" if b or not a else "") + ")"
    try:
        sel = parse_selector(f"[text='x'] +{text} [text='y']")
    except ValueError:
        assert not any(v >= 1 for v in values)  # only a polynomial that allows nothing is refused
        return
    assert (k in sel.relations[0].offsets) == expected, (text, k)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 8))
def test_space_and_gt_n_are_any_ancestor(depth):
    chain = n(f"n{depth + 1}")
    for level in range(depth, 0, -1):
        chain = n(f"n{level}", chain)
    t = tree(chain)
    leaf = f"[text='n{depth + 1}']"
    assert hit(f"@[text='n1'] {leaf}", t) == hit(f"@[text='n1'] >n {leaf}", t) == "n1"
    assert hit(f"@[text='n1'] >{depth} {leaf}", t) == "n1"
    assert Offsets(None, 1, 0).any


_WORD = st.sampled_from(["跳过", "skip", "关闭", "a", "ab", ""])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["=", "^=", "*=", "$="]), _WORD), min_size=1, max_size=5), _WORD, _WORD
)
def test_a_long_or_of_one_property_means_what_each_test_means(tests, left, right):
    label = left + right
    t = tree(n("root", n(label, cls="android.widget.TextView")))
    selector = "[" + " || ".join(f'text{op}"{value}"' for op, value in tests) + "][parent!=null]"
    holds = {
        "=": lambda v: label == v,
        "^=": lambda v: label.startswith(v),
        "*=": lambda v: v in label,
        "$=": lambda v: label.endswith(v),
    }
    expected = bool(label) and any(holds[op](value) for op, value in tests)  # "" is null: no test holds
    assert (hit(selector, t) is not None) == expected
