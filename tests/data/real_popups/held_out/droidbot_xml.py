"""A DroidBot state (states/state_*.json: a flat list of views with parent / children ids) as a uiautomator dump.

Used once to build the held-out trees of this folder (sources.yaml names every input). Each view becomes a
<node> with the dump's attributes; ``index`` is the view's position among its parent's children, invisible
views are kept with visible-to-user="false", bounds are written as DroidBot recorded them, and characters no XML
document may hold (control characters some apps put in their text) are dropped.

    python droidbot_xml.py STATE.json OUT.xml
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from xml.sax.saxutils import quoteattr

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")  # no XML 1.0 document may hold these
FLAGS = (
    ("checkable", "checkable"),
    ("checked", "checked"),
    ("clickable", "clickable"),
    ("enabled", "enabled"),
    ("focusable", "focusable"),
    ("focused", "focused"),
    ("scrollable", "scrollable"),
    ("long-clickable", "long_clickable"),
    ("password", "is_password"),
    ("selected", "selected"),
    ("visible-to-user", "visible"),
)


def to_xml(state: dict) -> str:
    views = {v["temp_id"]: v for v in state["views"]}
    out = ["<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"]

    def node(view: dict, index: int) -> None:
        (left, top), (right, bottom) = view["bounds"]
        attrs = {
            "index": str(index),
            "text": view.get("text") or "",
            "resource-id": view.get("resource_id") or "",
            "class": view.get("class") or "",
            "package": view.get("package") or "",
            "content-desc": view.get("content_description") or "",
            **{xml: "true" if view.get(key) else "false" for xml, key in FLAGS},
            "bounds": f"[{left},{top}][{right},{bottom}]",
        }
        out.append(
            "<node " + " ".join(f"{k}={quoteattr(_NOT_XML.sub('', v))}" for k, v in attrs.items()) + ">"
        )
        for i, child in enumerate(view.get("children") or []):
            if child in views:
                node(views[child], i)
        out.append("</node>")

    roots = [v for v in state["views"] if v.get("parent", -1) == -1]
    for i, root in enumerate(roots):
        node(root, i)
    out.append("</hierarchy>")
    return "".join(out)


if __name__ == "__main__":
    Path(sys.argv[2]).write_text(
        to_xml(json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))), encoding="utf-8"
    )
