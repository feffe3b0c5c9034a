"""An Appium page source (UiAutomator2 driver: each element named by its class) as a uiautomator dump.

Used once to build held-out trees of this folder (sources.yaml names every input, `basis: appium_page_source`).
Every element under <hierarchy> becomes a <node> with the same attributes in the same order (its class is already
in ``class``); nothing is added, dropped or reordered, and the text nodes between elements are left as they were.

    python appium_xml.py PAGE_SOURCE.xml OUT.xml
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def to_dump(source: bytes) -> bytes:
    root = ET.fromstring(source)
    for element in root.iter():
        if element is not root:
            element.tag = "node"
    return (
        b"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
        + ET.tostring(root, encoding="utf-8").split(b"?>", 1)[-1]
    )


if __name__ == "__main__":
    Path(sys.argv[2]).write_bytes(to_dump(Path(sys.argv[1]).read_bytes()))
