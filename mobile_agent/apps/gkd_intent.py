"""What a GKD group is for: dismissing a popup of some kind, or automating something (functional).

A subscription's categories (开屏广告, 更新提示, 功能类, ...) capture groups by name prefix; a group outside every
category (some files have none) is read by the words in its name. Only dismissal kinds act by default: a group
that automates (功能类, auto-click, collecting rewards, watching adverts for coins, signing in) or one whose purpose
cannot be read acts only when the user names its category or group (``--popup-categories``).
"""

from __future__ import annotations

CATEGORIES_ENV = (
    "MOBILE_AGENT_POPUP_CATEGORIES"  # the popup_categories setting, which --popup-categories sets
)

# The kinds of popup a dismissal group closes, with the words that name them (category names first).
DISMISSAL_KINDS: dict[str, tuple[str, ...]] = {
    "splash": ("开屏广告", "开屏", "启动广告", "启动页广告", "闪屏"),
    "update": (
        "更新提示",
        "更新弹窗",
        "版本更新",
        "升级弹窗",
        "升级提示",
        "升级提醒",
        "更新提醒",
        "软件更新",
        "忽略升级",
        "新版本",
        "检测到新版",
    ),
    "teen": ("青少年模式", "青少年", "未成年", "儿童模式"),
    "rating": ("评价提示", "评价弹窗", "评分", "好评"),
    "notification": ("通知提示", "通知权限", "开启通知", "推送通知", "消息通知"),
    "permission": ("权限提示", "定位提示", "权限弹窗", "定位权限", "请求权限"),
    "ad": (
        "全屏广告",
        "局部广告",
        "分段广告",
        "弹窗广告",
        "广告弹窗",
        "卡片广告",
        "信息流广告",
        "悬浮广告",
        "浮窗广告",
        "横幅广告",
        "广告",
        "弹窗",
    ),
}
FUNCTIONAL_CATEGORY = ("功能类", "功能")
# Words that mark automation: the group does something for the user rather than close something in their way.
FUNCTIONAL_WORDS = (
    "功能",
    "自动",
    "领奖",
    "领取",
    "奖励",
    "签到",
    "金币",
    "赚",
    "看视频",
    "看广告",
    "任务",
    "积分",
    "福利",
    "抽奖",
    "能量",
    "浇水",
    "收取",
    "答题",
    "点赞",
    "关注",
    "打卡",
    "兑换",
    "京豆",
    "话费",
    "现金",
    "养",
    "游戏",
    "启动应用",
    "解锁",
    "展开",
    "点击",
)


def kind_of(group_name: str, category: str | None) -> str:
    """The group's kind: one of DISMISSAL_KINDS, "functional", or "other" (purpose unclear)."""
    if category is not None:
        if any(category.startswith(word) for word in FUNCTIONAL_CATEGORY):
            return "functional"
        for kind, words in DISMISSAL_KINDS.items():
            if category == words[0] or (kind != "ad" and category in words):
                return kind
        if category in DISMISSAL_KINDS["ad"]:
            return "ad"
        return "other"
    if any(word in group_name for word in FUNCTIONAL_WORDS):
        return "functional"
    for kind, words in DISMISSAL_KINDS.items():
        if any(word in group_name for word in words):
            return kind
    return "other"


def acts_by_default(kind: str) -> bool:
    return kind in DISMISSAL_KINDS


def named_kind(name: str) -> str | None:
    """The kind a --popup-categories name stands for (an English kind, or a category name such as 更新提示), or None."""
    if name in DISMISSAL_KINDS or name == "functional":
        return name
    kind = kind_of(name, name)
    return None if kind == "other" else kind
