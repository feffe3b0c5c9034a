"""Shared helpers for the simulated-world tests: find nodes in a phone's dump, tap them."""

from __future__ import annotations

import re

from mobile_agent.sim.phone.phone import Phone

NODE = re.compile(r"<node ([^>]*?)/?>")
ATTR = re.compile(r'([\w-]+)="([^"]*)"')


def nodes(phone: Phone) -> list[dict[str, str]]:
    out = []
    for match in NODE.finditer(phone.hierarchy_xml()):
        attrs = dict(ATTR.findall(match.group(1)))
        left, top, right, bottom = map(int, re.findall(r"\d+", attrs["bounds"]))
        attrs["center"] = ((left + right) // 2, (top + bottom) // 2)  # type: ignore[assignment]
        out.append(attrs)
    return out


def find(phone: Phone, text: str | None = None, rid: str | None = None, desc: str | None = None) -> dict:
    """The first node that matches, clickable ones first (a title and a button often share their text)."""
    for attrs in sorted(nodes(phone), key=lambda a: a["clickable"] != "true"):
        if text is not None and attrs["text"] != text:
            continue
        if rid is not None and attrs["resource-id"] != rid:
            continue
        if desc is not None and attrs["content-desc"] != desc:
            continue
        return attrs
    raise AssertionError(f"no node text={text!r} rid={rid!r} desc={desc!r} on {phone.screen()}")


def tap(phone: Phone, text: str | None = None, rid: str | None = None, desc: str | None = None) -> None:
    phone.tap(*find(phone, text, rid, desc)["center"])
