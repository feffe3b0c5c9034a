"""What a global popup rule may not touch: the app's content, and an onboarding guide taken for an advert.

A GKD global group (``gkd/GLOBAL/...``) acts in every app, and its author never saw the app. Its selectors are
words (跳过, skip, 以后再说 ...) that ordinary screens hold too. Measured on real trees no rule was written from
(bench/popups_real.py, held out), gkd-kit's global 开屏广告 group tapped a word in a word game's list ("skip"),
ganlinte's and gkd-kit's tapped the 自动跳过广告 switch label of an ad skipper's settings, and gkd-kit's tapped the
SKIP of a first-run guide. So before a global rule acts, its target is checked:

- **Content of a native scrolling container** (a list, a grid, a scroll view, a Compose lazy list): a row, a word, a
  settings label. A splash advert's skip control and an update dialog's buttons sit on a fixed layer. A web page
  (WebView) and a pager (ViewPager) scroll as a whole and may carry an advert of their own, so they do not count.
- **A guide, for splash rules**: the screen also offers a forward control (Next, 下一步 ...). A guide's skip is the
  app's own flow; an advert has no "next". The app's own rules (a manifest, or the subscription's rule for that app)
  may still dismiss it.

Rules written for one app are not checked here: their author saw the app's screens.
"""

from __future__ import annotations

import re

from mobile_agent.apps.gkd_rules import GkdRule
from mobile_agent.screen.viewtree import Element, ViewTree

GLOBAL = "gkd/GLOBAL/"
# scrolling ancestors that are not an app's own content list: a whole web page, a pager of full pages
WHOLE_PAGES = ("WebView", "ViewPager")
FORWARD = re.compile(r"^\s*(next|下一步|下一页|get started)\s*[>›→]?\s*$", re.IGNORECASE)


def refuses(rule: GkdRule, target: Element, tree: ViewTree) -> str | None:
    """Why a global rule must leave the target alone, or None (also None for a rule written for one app)."""
    if not rule.group.startswith(GLOBAL):
        return None
    lister = scrolling_container(target)
    if lister is not None:
        return f"a global rule does not touch the app's content (the target is inside a scrolling {lister})"
    if rule.kind == "splash":
        forward = forward_control(tree)
        if forward is not None:
            return f"a guide, not an advert: the screen offers {forward!r} (left to the app's own rules)"
    return None


def scrolling_container(target: Element) -> str | None:
    """The class of the nearest native scrolling ancestor of the target (lists, scroll views), or None."""
    for ancestor in target.node.iterancestors():
        if ancestor.get("scrollable") != "true":
            continue
        cls = ancestor.get("class") or ""
        if any(page in cls for page in WHOLE_PAGES):
            continue
        return cls.rsplit(".", 1)[-1] or "view"
    return None


def forward_control(tree: ViewTree) -> str | None:
    """The label of a visible forward control (Next, 下一步 ...) on the screen, or None."""
    for e in tree.elements:
        for label in (e.text, e.content_desc):
            if label and FORWARD.match(label) and e.node.get("visible-to-user") != "false":
                return label.strip()
    return None
