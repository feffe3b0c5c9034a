"""Which apps the simulated world knows: the built-in apps with a world of their own, and the system apps' labels."""

from __future__ import annotations

from mobile_agent.sim.world.alipay import Alipay
from mobile_agent.sim.world.base import SimApp
from mobile_agent.sim.world.meituan.app import Meituan
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
