"""The simulated phone's apps, as data plus small builders (see base.py for the frame they plug into)."""

from __future__ import annotations

from mobile_agent.sim.world import popups, system
from mobile_agent.sim.world.alipay import Alipay
from mobile_agent.sim.world.base import SimApp
from mobile_agent.sim.world.generic import GenericApp
from mobile_agent.sim.world.launcher import Launcher
from mobile_agent.sim.world.meituan import Meituan
from mobile_agent.sim.world.settings import Settings
from mobile_agent.sim.world.wechat import WeChat

BUILTIN_APPS: dict[str, type[SimApp]] = {app.package: app for app in (WeChat, Meituan, Alipay, Settings)}

SYSTEM_LABELS = {
    "com.android.settings": "设置",
    "com.android.contacts": "联系人",
    "com.android.camera2": "相机",
    "com.android.gallery3d": "相册",
    "com.android.deskclock": "时钟",
    "com.android.calculator2": "计算器",
    "com.android.chrome": "浏览器",
    "com.android.phone": "电话",
    "com.android.launcher3": "桌面",
    "com.github.uiautomator": "ATX",
}

__all__ = ["BUILTIN_APPS", "SYSTEM_LABELS", "GenericApp", "Launcher", "SimApp", "popups", "system"]
