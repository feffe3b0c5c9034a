"""Food delivery on com.sankuai.meituan: home with a search box, search, results, a shop with a menu and a cart,
checkout (提交订单 records an unpaid order) and the cashier whose 确认支付 marks the order paid.

This module is the app: its activities, its own data (the carts) and what taps on its screens do to the world;
browse.py and order.py build the screens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mobile_agent.sim.state import Shop
from mobile_agent.sim.world.base import Ctx, SimApp
from mobile_agent.sim.world.meituan import browse, order
from mobile_agent.sim.world.meituan.look import YELLOW
from mobile_agent.sim.world.node import Node
from mobile_agent.sim.world.traps import SCREENS

if TYPE_CHECKING:
    from mobile_agent.sim.phone.phone import Phone


class Meituan(SimApp):
    package = "com.sankuai.meituan"
    shared_screens = SCREENS  # the red-team trap screens (sim/world/traps.py)
    label = "美团"
    icon_color = YELLOW
    activities = {
        "home": "com.meituan.android.pt.homepage.activity.MainActivity",
        "search": "com.sankuai.meituan.search.SearchActivity",
        "results": "com.sankuai.meituan.search.result.SearchResultActivity",
        "shop": "com.sankuai.waimai.business.restaurant.WMRestaurantActivity",
        "checkout": "com.sankuai.waimai.business.order.submit.OrderConfirmActivity",
        "pay": "com.meituan.android.cashier.NativeStandardCashierActivity",
        "paid": "com.meituan.android.cashier.PayResultActivity",
    }

    def __init__(self) -> None:
        self.carts: dict[str, dict[str, int]] = {}  # shop -> dish -> quantity

    def reset(self, phone: Phone) -> None:
        self.carts.clear()

    # ------------------------------------------------------------------ screens
    def screen_home(self, ctx: Ctx) -> Node:
        return browse.home(self, ctx)

    def screen_search(self, ctx: Ctx) -> Node:
        return browse.search(self, ctx)

    def screen_results(self, ctx: Ctx) -> Node:
        return browse.results(self, ctx)

    def screen_shop(self, ctx: Ctx) -> Node:
        return order.menu(self, ctx)

    def screen_checkout(self, ctx: Ctx) -> Node:
        return order.checkout(self, ctx)

    def screen_pay(self, ctx: Ctx) -> Node:
        return order.cashier(self, ctx)

    def screen_paid(self, ctx: Ctx) -> Node:
        return order.paid(self, ctx)

    # ------------------------------------------------------------------ search
    def run_search(self, ctx: Ctx, word: str | None = None) -> None:
        query = (word if word is not None else ctx.field("query")).strip()
        if not query:
            ctx.toast("请输入搜索内容")
            return
        ctx.set_field("query", query)
        ctx.record("search", query=query)
        ctx.push("results", query=query)

    def matching_shops(self, ctx: Ctx, query: str) -> list[Shop]:
        def hit(shop: Shop) -> bool:
            words = [shop.name, *shop.keywords, *(d.name for d in shop.dishes)]
            return any(query in w or w in query for w in words)

        return [s for s in ctx.data.shops if hit(s)]

    # ------------------------------------------------------------------ cart, order and payment
    def change_cart(self, ctx: Ctx, shop: Shop, cart: dict[str, int], dish_name: str, delta: int) -> None:
        new = max(0, cart.get(dish_name, 0) + delta)
        if new:
            cart[dish_name] = new
        else:
            cart.pop(dish_name, None)
        ctx.record("cart", shop=shop.name, dish=dish_name, quantity=new)
        ctx.changed()

    def order_items(self, shop: Shop) -> list[dict]:
        cart = self.carts.get(shop.name, {})
        return [
            {"name": d.name, "qty": cart[d.name], "price": d.price} for d in shop.dishes if cart.get(d.name)
        ]

    def submit(self, ctx: Ctx, shop: Shop, items: list[dict], total: float) -> None:
        placed = {"app": self.package, "shop": shop.name, "items": items, "total": total, "paid": False}
        ctx.state.orders.append(placed)
        ctx.record("order_submitted", shop=shop.name, total=total)
        ctx.push("pay", order=len(ctx.state.orders) - 1)

    def pay(self, ctx: Ctx, placed: dict) -> None:
        placed["paid"] = True
        ctx.record("order_paid", shop=placed["shop"], total=placed["total"])
        self.carts.pop(placed["shop"], None)
        ctx.replace("paid", order=ctx.page.params["order"])
