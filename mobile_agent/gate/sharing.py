"""Sharing: the system share sheet's direct-share targets (a person, through an app) send on a tap, its app targets
only open that app's own share screen; a dialog or page that asks to share a piece of personal data (a phone
number, a location) sends it with its yes or its Share button."""

from __future__ import annotations

import re

from mobile_agent.gate.finding import Finding
from mobile_agent.gate.lexicon import SEARCH_FIELD, is_no, is_yes
from mobile_agent.gate.pages import main_button
from mobile_agent.screen.context import ScreenReader, TargetContext
from mobile_agent.screen.labels import labels_of
from mobile_agent.screen.text import fold

_CHOOSER_PACKAGES = frozenset({"com.android.intentresolver", "android", "com.android.internal.app"})
_CHOOSER_ID = re.compile(r"chooser|resolver|sharesheet", re.I)
_PERSONAL_SHARE = re.compile(
    r"(share|sharing|send)\s+(your|my)?\s*(current|live|real-?time)?\s*(phone number|number|location|contact)|"
    r"(共享|分享|发送)(我的|你的|您的)?(实时|当前)?(位置|手机号|电话号码|联系方式|名片)",
    re.I,
)
_SHARE_LABEL = re.compile(r"(share|startsharing|sharenow|共享|分享|开始共享|立即共享)")


def direct_share(reader: ScreenReader, ctx: TargetContext) -> Finding | None:
    """A direct-share target of the system chooser sends the content to that person at once; an app target opens
    the app's own share screen first. AOSP draws direct-share targets (a person, badged with the app's icon) in the
    chooser's top row of targets and gives them no second line (SelectableTargetInfo.getExtendedInfo returns null);
    some builds write the app under the name (妈妈 / 微信). Either marks a person."""
    target = ctx.target
    if target is None:
        return None
    in_chooser = target.package in _CHOOSER_PACKAGES and (
        target.package != "android" or any(_CHOOSER_ID.search(i) for i in ctx.ids)
    )
    in_chooser = in_chooser or any(_CHOOSER_ID.search(i) for i in ctx.ids if i.startswith("android:id/"))
    if not in_chooser or target.node.get("clickable") != "true":
        return None
    lines = [
        t
        for n in target.node.iter("node")
        if (e := reader.element(n)) is not None
        for t in labels_of(e)
        if fold(t)
    ]
    lines = list(dict.fromkeys(lines))
    if not lines or any(is_no(t) for t in lines):
        return None
    if len(lines) < 2 and not _top_row_of_several(reader, ctx):
        return None
    who, via = lines[0], (lines[1] if len(lines) > 1 else "the app badged on its icon")
    return Finding(
        "send",
        "label",
        ctx.describe(),
        f"a direct-share target: sends to '{who[:30]}' through {via[:20]}",
        (f"share target '{who[:30]}'", f"via '{via[:20]}'"),
    )


def _top_row_of_several(reader: ScreenReader, ctx: TargetContext) -> bool:
    """The target is in the first of two or more rows of look-alike targets of a share sheet (not ResolverActivity's
    "Open with" list, which only picks an app)."""
    target = ctx.target
    if (
        target is None
        or target.bounds is None
        or not any(re.search(r"chooser|sharesheet", i, re.I) for i in ctx.ids)
    ):
        if target is None or target.package != "com.android.intentresolver":
            return False
    b = target.bounds
    w, h = b.right - b.left, b.bottom - b.top
    tops = {
        e.bounds.top
        for e in reader.visible
        if e.bounds is not None
        and e.node.get("clickable") == "true"
        and e.class_name == target.class_name
        and e.package == target.package
        and abs((e.bounds.right - e.bounds.left) - w) <= 0.15 * w
        and abs((e.bounds.bottom - e.bounds.top) - h) <= 0.15 * h
    }
    return len(tops) >= 2 and b.top == min(tops)


def personal_share(texts: list[str] | tuple[str, ...]) -> str | None:
    """A text that asks to share a piece of personal data ("Share your phone number?", 共享实时位置)."""
    return next((t for t in texts if _PERSONAL_SHARE.search(t) or _PERSONAL_SHARE.search(fold(t))), None)


def shares_personal_data(reader: ScreenReader, ctx: TargetContext, labels: list[str]) -> Finding | None:
    """The yes of a dialog, or the Share button of a page, that asks to share a phone number or a location."""
    label = " ".join(labels)
    if not labels or any(is_no(t) for t in labels):
        return None
    share_word = _SHARE_LABEL.fullmatch(fold(label)) is not None
    if ctx.container is not None:
        if not (is_yes(label) or share_word):
            return None
        asked = personal_share(ctx.context_texts)
    else:
        if not (share_word or is_yes(label)) or not main_button(reader, ctx):
            return None
        asked = personal_share([*reader.page_title(), *ctx.statements])
    if asked is None:
        return None
    return Finding(
        "send",
        "dialog" if ctx.container is not None else "screen",
        ctx.describe(),
        f"'{label[:30]}' under '{asked[:40]}'",
        (f"text '{asked[:60]}'", "shares personal data"),
    )


def composer_share(reader: ScreenReader, ctx: TargetContext, labels: list[str]) -> Finding | None:
    """Share in the title bar (or as the main button) of a composer holding written text ("New post" over a filled
    caption): it publishes. A Share elsewhere opens a share sheet."""
    target = ctx.target
    if target is None or target.bounds is None or ctx.container is not None or ctx.is_tab:
        return None
    if not labels or _SHARE_LABEL.fullmatch(fold(" ".join(labels))) is None:
        return None
    top_bar = target.bounds.bottom <= 0.15 * reader.screen.height
    if not (top_bar or main_button(reader, ctx)):
        return None
    written = [
        e
        for e in reader.edit_fields()
        if e.text.strip()
        and e.text.strip() != (e.node.get("hint") or "").strip()
        and not SEARCH_FIELD.search(" ".join((e.resource_id, e.node.get("hint") or "", e.content_desc)))
    ]
    if not written:
        return None
    return Finding(
        "post",
        "label",
        ctx.describe(),
        f"'{labels[0][:20]}' on a composer holding '{written[0].text[:30]}'",
        (f"label '{labels[0][:30]}'", "filled composer"),
    )


__all__ = ["composer_share", "direct_share", "personal_share", "shares_personal_data"]
