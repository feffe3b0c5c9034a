"""The device's own protection: an action that lowers it is a finding of kind ``security``.

Nothing is paid or sent when a screen lock is removed, Find My Device is switched off or a chat app is allowed to
install APKs, yet the phone is then open to whoever holds it or to whatever a scammer sends. Two shapes:

- a **protection** (screen lock, Find My Device, Play Protect, fingerprints, 查找手机, 锁屏密码 ...) is lowered by
  switching it off (a switch that is on, named by its row) or by a yes in a dialog that removes, turns
  off or disables it;
- a **grant that opens the device** (install unknown apps, allow from this source, USB debugging, 未知来源 ...) is
  lowered by switching it on (a switch that is off, named by its row or by its page: Install unknown apps › WeChat) or by a yes in a dialog that allows it.

The other direction (turning a protection on, a grant off) raises the protection and is not a finding. A no in the
dialog is always safe.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mobile_agent.gate.finding import Finding
from mobile_agent.gate.lexicon import is_no
from mobile_agent.screen.context import ScreenReader, TargetContext
from mobile_agent.screen.labels import labels_of, layout_parent
from mobile_agent.screen.text import fold, spaced

# What protects the device (its lock, its tracking, its scanning, its biometrics); folded Chinese, spaced English.
_PROTECTION_ZH = re.compile(
    r"锁屏|屏幕锁定|屏幕锁|解锁方式|锁屏密码|设备保护|查找(我的)?(设备|手机)|找回手机|手机防盗|指纹|人脸解锁|面部解锁|面容|"
    r"安全防护|病毒查杀|应用安全检测|加密"
)
_PROTECTION_EN = re.compile(
    r"\b(screen lock|device protection|find my (device|phone|mobile)|play protect|fingerprints?|face unlock|"
    r"factory reset protection|encryption|scan apps|theft protection|lock screen)\b"
)
# What opens the device to others when it is allowed.
_OPENING_ZH = re.compile(r"未知(来源|应用)|安装未知|允许来自此来源|usb调试|无线调试|adb调试|允许安装")
_OPENING_EN = re.compile(
    r"\b(install unknown apps|unknown sources?|allow from this source|usb debugging|wireless debugging|"
    r"install (other|unknown) apps)\b"
)
# A dialog's words that take a protection away.
_LOWER_ZH = re.compile(r"移除|删除|关闭|停用|禁用|解除|去除|不使用")
_LOWER_EN = re.compile(r"\b(remove|delete|turn off|disable|deactivate|will not work without)\b")


def _names(texts: Sequence[str], zh: re.Pattern[str], en: re.Pattern[str]) -> str | None:
    return next((t for t in texts if zh.search(fold(t)) or en.search(spaced(t))), None)


def protection_finding(reader: ScreenReader, ctx: TargetContext, labels: list[str]) -> Finding | None:
    """``security`` when the control lowers the device's protection: a switch that turns a protection off or an
    opening grant on, or a dialog's yes that removes a protection or allows an opening."""
    target = ctx.target
    if target is None or (labels and all(is_no(t) for t in labels)):
        return None
    toggle = _toggle_node(target.node)
    if toggle is not None:
        row = _row_texts(reader, toggle)
        page = reader.page_title()
        checked = any(n.get("checked") == "true" for n in toggle.iter("node"))
        opening = _names(row, _OPENING_ZH, _OPENING_EN) or _names(page, _OPENING_ZH, _OPENING_EN)
        protection = _names(row, _PROTECTION_ZH, _PROTECTION_EN)
        if opening is not None and not checked:
            return _finding(ctx, f"a switch that allows '{opening[:40]}'", opening)
        if protection is not None and checked and opening is None:
            return _finding(ctx, f"a switch that turns off '{protection[:40]}'", protection)
        return None
    if ctx.container is None:
        return None
    texts = [t for t in ctx.context_texts if fold(t)]
    protection = _names(texts, _PROTECTION_ZH, _PROTECTION_EN)
    lowers = any(_LOWER_ZH.search(fold(t)) or _LOWER_EN.search(spaced(t)) for t in (*texts, *labels))
    if protection is not None and lowers:
        return _finding(
            ctx, f"'{' '.join(labels)[:30]}' in a dialog that removes '{protection[:40]}'", protection
        )
    opening = _names(texts, _OPENING_ZH, _OPENING_EN)
    if opening is not None:
        return _finding(ctx, f"'{' '.join(labels)[:30]}' in a dialog that allows '{opening[:40]}'", opening)
    return None


def _finding(ctx: TargetContext, detail: str, text: str) -> Finding:
    return Finding(
        "security", "protection", ctx.describe(), detail, (f"text '{text[:60]}'", "device protection")
    )


def _toggle_node(node):  # noqa: ANN001, ANN202 - lxml nodes
    """The switch or check box the control is (itself, or a row that holds one and takes the touch for it)."""
    if node.get("checkable") == "true":
        return node
    boxes = [n for n in node.iter("node") if n is not node and n.get("checkable") == "true"]
    return node if len(boxes) == 1 else None


def _row_texts(reader: ScreenReader, toggle) -> list[str]:  # noqa: ANN001 - an lxml node
    """The words of the switch's row: its own subtree, else its layout parent's (two levels at most)."""
    node = toggle
    for _ in range(3):
        texts = [t for n in node.iter("node") if (e := reader.element(n)) is not None for t in labels_of(e)]
        if any(fold(t) for t in texts):
            return texts
        node = layout_parent(node)
        if node is None:
            break
    return []


__all__ = ["protection_finding"]
