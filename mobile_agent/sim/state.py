"""What happened on a simulated phone (SimState, Event) and the data its apps show (WorldData).

SimState is the inspectable outcome a test or a verifier checks ("was the message really sent?"); WorldData is the
seed the apps render (contacts, chats, shops, balance) — a scenario replaces parts of it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Event:
    time: float  # time.time() when it happened
    kind: str  # tap, double_tap, long_press, swipe, drag, key, text, clear_text, paste, launch, screen, popup, ...
    detail: dict[str, Any]


@dataclass
class SimState:
    messages_sent: list[dict[str, Any]] = field(default_factory=list)  # {app, contact, text}
    orders: list[dict[str, Any]] = field(default_factory=list)  # {app, shop, items, total, paid}
    transfers: list[dict[str, Any]] = field(default_factory=list)  # {app, to, amount, confirmed}
    settings_changed: dict[str, Any] = field(default_factory=dict)  # friendly key -> new value
    typed: list[dict[str, Any]] = field(default_factory=list)  # {package, screen, text}
    popups_dismissed: list[dict[str, Any]] = field(default_factory=list)  # {package, popup, how}
    logged_in: dict[str, bool] = field(default_factory=dict)  # package -> logged in through a login wall
    calls: list[dict[str, Any]] = field(default_factory=list)  # {app, to, number}: calls placed
    shares: list[dict[str, Any]] = field(default_factory=list)  # {app, to, what, value}: data handed over

    def as_dict(self) -> dict[str, Any]:
        return {
            "messages_sent": list(self.messages_sent),
            "orders": list(self.orders),
            "transfers": list(self.transfers),
            "settings_changed": dict(self.settings_changed),
            "typed": list(self.typed),
            "popups_dismissed": list(self.popups_dismissed),
            "logged_in": dict(self.logged_in),
            "calls": list(self.calls),
            "shares": list(self.shares),
        }


@dataclass
class Dish:
    name: str
    price: float


@dataclass
class Shop:
    name: str
    dishes: list[Dish]
    rating: float = 4.7
    monthly_sales: int = 3000
    keywords: list[str] = field(default_factory=list)  # extra words a search matches besides name and dishes
    delivery_fee: float = 3.0


def _default_chats() -> dict[str, list[dict[str, str]]]:
    return {
        "张三": [{"from": "张三", "text": "明天的会改到下午三点了"}, {"from": "me", "text": "好的，收到"}],
        "李四": [{"from": "李四", "text": "周末一起打球吗？"}],
        "文件传输助手": [{"from": "me", "text": "会议纪要.docx"}],
        "王五": [{"from": "王五", "text": "[图片]"}],
        "项目组": [{"from": "赵六", "text": "今天的日报记得发一下"}],
        "妈妈": [{"from": "妈妈", "text": "晚上回家吃饭吗"}],
        "赵六": [{"from": "赵六", "text": "收到，谢谢"}],
        "微信支付": [{"from": "微信支付", "text": "微信支付凭证"}],
        "订阅号消息": [{"from": "订阅号消息", "text": "人民日报：今日要闻"}],
    }


def _default_shops() -> list[Shop]:
    return [
        Shop(
            "杨铭宇黄焖鸡米饭(科技园店)",
            [
                Dish("黄焖鸡米饭(大份)", 22.0),
                Dish("黄焖鸡米饭(小份)", 18.0),
                Dish("黄焖排骨米饭", 26.0),
                Dish("加一份米饭", 2.0),
                Dish("可乐", 4.0),
            ],
            rating=4.8,
            monthly_sales=5200,
            keywords=["黄焖鸡", "快餐"],
        ),
        Shop(
            "老街黄焖鸡米饭",
            [Dish("招牌黄焖鸡米饭", 19.9), Dish("黄焖鸡+卤蛋套餐", 23.5), Dish("香菇黄焖鸡", 21.0)],
            rating=4.6,
            monthly_sales=2100,
            keywords=["黄焖鸡", "快餐"],
        ),
        Shop(
            "蜜雪冰城(南山店)",
            [Dish("柠檬水", 4.0), Dish("珍珠奶茶", 7.0), Dish("冰淇淋", 3.0)],
            rating=4.7,
            monthly_sales=9000,
            keywords=["奶茶", "饮品"],
        ),
        Shop(
            "麦当劳(深圳湾店)",
            [Dish("巨无霸套餐", 38.0), Dish("麦辣鸡腿堡", 22.0), Dish("薯条(中)", 12.0)],
            rating=4.7,
            monthly_sales=8000,
            keywords=["汉堡", "快餐", "炸鸡"],
        ),
        Shop(
            "沙县小吃",
            [Dish("拌面+扁食", 15.0), Dish("鸡腿饭", 18.0), Dish("蒸饺", 10.0)],
            rating=4.5,
            monthly_sales=4300,
            keywords=["快餐", "小吃"],
        ),
    ]


@dataclass
class WorldData:
    """The seed data the built-in apps show. Scenarios override parts of it."""

    wechat_chats: dict[str, list[dict[str, str]]] = field(default_factory=_default_chats)
    wechat_contacts: list[str] = field(
        default_factory=lambda: [
            "张三",
            "李四",
            "王五",
            "赵六",
            "妈妈",
            "陈晨",
            "刘洋",
            "文件传输助手",
            "周杰",
            "吴磊",
            "郑洁",
            "孙丽",
            "钱进",
            "冯涛",
            "何静",
            "高峰",
            "林娜",
            "罗斌",
            "梁晓",
            "宋雨",
            "唐宁",
            "许诺",
            "韩梅梅",
        ]
    )
    shops: list[Shop] = field(default_factory=_default_shops)
    search_history: list[str] = field(default_factory=lambda: ["黄焖鸡米饭", "奶茶", "麦当劳", "水果"])
    alipay_contacts: list[str] = field(default_factory=lambda: ["李四", "张三", "王五", "妈妈"])
    balance: float = 5000.0
    address: str = "科技园南区 深圳湾科技生态园 10栋 8楼"

    def shop(self, name: str) -> Shop | None:
        return next((s for s in self.shops if s.name == name), None)


def now() -> float:
    return time.time()
