"""The view tree's elements are built without the dataclasses' __init__ (it is the hot part of reading a dump): on
every real dump they equal, field for field, what the plain constructors give, and they stay frozen."""

from __future__ import annotations

import dataclasses
import pickle
import re
from pathlib import Path

import pytest
from lxml import etree

from mobile_agent.screen.viewtree import Bounds, Element, ViewTree, visible

REAL = sorted((Path(__file__).parents[2] / "data" / "real_viewtrees").glob("*.xml"))
_BOUNDS_RE = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


def _reference(node: etree._Element) -> Element:
    """The element as the constructors build it (the parser before it filled the records in directly)."""
    match = _BOUNDS_RE.fullmatch(node.get("bounds", "").replace(" ", ""))
    bounds = Bounds(*(int(v) for v in match.groups())) if match else None
    return Element(
        text=node.get("text", ""),
        resource_id=node.get("resource-id", ""),
        content_desc=node.get("content-desc", ""),
        class_name=node.get("class", ""),
        package=node.get("package", ""),
        bounds=bounds,
        node=node,
    )


def _fields(element: Element) -> tuple:
    return tuple(
        (f.name, type(getattr(element, f.name)), getattr(element, f.name))
        for f in dataclasses.fields(element)
    )


def test_there_are_real_dumps() -> None:
    assert len(REAL) >= 50


@pytest.mark.parametrize("path", REAL, ids=[p.stem for p in REAL])
def test_every_element_of_a_real_dump_is_what_the_constructors_build(path: Path) -> None:
    tree = ViewTree._parse(path.read_bytes())
    assert tree is not None
    nodes = list(tree.root.iter("node"))
    assert len(tree.elements) == len(nodes) > 0
    for element, node in zip(tree.elements, nodes, strict=True):
        expected = _reference(node)
        assert type(element) is Element
        assert element.node is node
        assert _fields(element) == _fields(expected)
        assert vars(element) == vars(expected) and list(vars(element)) == list(vars(expected))
        assert element == expected and hash(element) == hash(expected) and repr(element) == repr(expected)
        if expected.bounds is not None:
            assert type(element.bounds) is Bounds
            assert list(vars(element.bounds)) == ["left", "top", "right", "bottom"]
            assert element.bounds.centre == expected.bounds.centre
            assert element.bounds.empty == expected.bounds.empty
        assert visible(element) == visible(expected)


def test_bounds_in_odd_shapes_parse_as_before() -> None:
    boxes = [
        "[0,0][10,10]",
        "[ 1, 2 ][ 3 , 4 ]",
        "[-5,-6][7,8]",
        "",
        "[1,2][3]",
        "[a,b][c,d]",
        "[1,2][3,4] x",
    ]
    xml = (
        "<hierarchy>"
        + "".join(f'<node bounds="{b}" text="t{i}"/>' for i, b in enumerate(boxes))
        + "</hierarchy>"
    )
    tree = ViewTree._parse(xml)
    assert tree is not None
    assert [e.bounds for e in tree.elements] == [_reference(n).bounds for n in tree.root.iter("node")]
    assert [e.bounds for e in tree.elements][:3] == [
        Bounds(0, 0, 10, 10),
        Bounds(1, 2, 3, 4),
        Bounds(-5, -6, 7, 8),
    ]
    assert [e.bounds for e in tree.elements][3:] == [None, None, None, None]


def test_built_records_stay_frozen_and_pickle() -> None:
    tree = ViewTree._parse(REAL[0].read_bytes())
    assert tree is not None
    element = next(e for e in tree.elements if e.bounds is not None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        element.text = "changed"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        element.bounds.left = 1  # type: ignore[misc,union-attr]
    assert pickle.loads(pickle.dumps(element.bounds)) == element.bounds
    assert dataclasses.replace(element, text="x").text == "x"
