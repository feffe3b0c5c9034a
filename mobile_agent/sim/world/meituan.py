"""Food delivery on com.sankuai.meituan: home with a search box, search, results, a shop with a menu and a cart,
checkout (提交订单 records an unpaid order) and the cashier whose 确认支付 marks the order paid."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mobile_agent.sim.state import Shop
from mobile_agent.sim.world import kit
from mobile_agent.sim.world.base import Ctx, SimApp
from mobile_agent.sim.world.node import FRAME, LINEAR, Node, Style

if TYPE_CHECKING:
    from mobile_agent.sim.phone import Phone

YELLOW = kit.MEITUAN_YELLOW
ORANGE = (255, 102, 0)
DARK = (34, 34, 34)
GREY = (153, 153, 153)
CATEGORIES = [
    "美食",
    "外卖",
    "酒店民宿",
    "休闲玩乐",
    "电影演出",
    "打车",
    "买菜",
    "景点门票",
    "丽人美发",
    "跑腿",
]
HOT = ["黄焖鸡米饭", "麻辣烫", "奶茶", "烧烤", "炸鸡汉堡"]


def _money(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))


class Meituan(SimApp):
    package = "com.sankuai.meituan"
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

    # ------------------------------------------------------------------ home
    def screen_home(self, ctx: Ctx) -> Node:
        W, px, top = ctx.W, ctx.px, ctx.top
        root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=(245, 245, 245)))
        header = kit.box((0, top, W, top + px(260)), bg=YELLOW)
        header.add(
            kit.text(
                (px(30), top + px(20), px(330), top + px(100)),
                "科技园 ▾",
                px(44),
                DARK,
                bold=True,
                rid=self.rid("city_name"),
            )
        )
        header.add(
            kit.glyph(
                (W - px(110), top + px(25), W - px(40), top + px(95)),
                "scan",
                lambda: ctx.toast("扫一扫"),
                desc="扫一扫",
            )
        )
        search = kit.box(
            (px(30), top + px(120), W - px(30), top + px(230)),
            bg=(255, 255, 255),
            radius=px(55),
            rid=self.rid("search_edit"),
            on_click=lambda: ctx.push("search", focus="query"),
        )
        search.add(kit.glyph((px(60), top + px(145), px(120), top + px(205)), "search", fg=GREY))
        search.add(
            kit.text(
                (px(140), top + px(120), W - px(250), top + px(230)),
                "搜索美食、商家",
                px(40),
                GREY,
                rid=self.rid("search_hint"),
            )
        )
        search.add(
            kit.text(
                (W - px(220), top + px(130), W - px(40), top + px(220)),
                "搜索",
                px(40),
                DARK,
                bg=YELLOW,
                radius=px(45),
                align="center",
                bold=True,
            )
        )
        header.add(search)
        root.add(header)
        tabs = kit.tab_bar(
            ctx,
            ["首页", "视频", "消息", "购物车", "我的"],
            0,
            lambda i: None,
            rid=self.rid("tab_text"),
            accent=DARK,
            icons=["home", "dot", "chat", "cart", "user"],
        )
        feed_area = (0, top + px(260), W, tabs.bounds[1])
        shops = ctx.data.shops
        heights = [px(520), px(330)] + [px(330)] * len(shops)

        def block(i: int, b: tuple[int, int, int, int]) -> Node:
            left, t, right, bottom = b
            if i == 0:
                grid = kit.box(b, bg=(255, 255, 255), rid=self.rid("category_grid"))
                cell = W // 5
                for k, name in enumerate(CATEGORIES):
                    row, col = divmod(k, 5)
                    y = t + px(30) + row * px(240)
                    grid.add(
                        kit.icon_cell(
                            (col * cell, y, (col + 1) * cell, y + px(230)),
                            name,
                            icon=(px(60), px(120)),
                            label=(px(130), px(190)),
                            size=px(34),
                            fg=DARK,
                            rid=self.rid("category_item"),
                            on_click=lambda name=name: ctx.push("results", query=name),
                        )
                    )
                return grid
            if i == 1:
                return kit.image(
                    (px(30), t + px(20), W - px(30), bottom - px(10)),
                    "photo",
                    "meituan-banner",
                    radius=px(24),
                    rid=self.rid("banner"),
                    desc="广告",
                )
            shop = shops[i - 2]
            return self._shop_card(ctx, shop, b)

        root.add(kit.scroll_list(ctx, "feed", feed_area, heights, block, rid=self.rid("home_feed")))
        root.add(tabs)
        return root

    def _shop_card(self, ctx: Ctx, shop: Shop, b: tuple[int, int, int, int], query: str = "") -> Node:
        W, px = ctx.W, ctx.px
        left, t, right, bottom = b
        card = kit.box(
            (px(20), t + px(10), W - px(20), bottom - px(10)),
            bg=(255, 255, 255),
            radius=px(20),
            rid=self.rid("poi_item"),
            on_click=lambda: ctx.push("shop", shop=shop.name),
        )
        card.add(
            kit.image(
                (px(40), t + px(30), px(270), bottom - px(30)),
                "photo",
                f"shop-{shop.name}",
                radius=px(16),
                rid=self.rid("poi_image"),
            )
        )
        card.add(
            kit.text(
                (px(300), t + px(30), W - px(50), t + px(100)),
                shop.name,
                px(46),
                DARK,
                bold=True,
                rid=self.rid("poi_name"),
            )
        )
        card.add(
            kit.text(
                (px(300), t + px(110), W - px(50), t + px(160)),
                f"{shop.rating}分  月售{shop.monthly_sales}  30分钟  1.2km",
                px(34),
                GREY,
            )
        )
        card.add(
            kit.text(
                (px(300), t + px(165), W - px(50), t + px(215)),
                f"起送¥0  配送¥{_money(shop.delivery_fee)}",
                px(34),
                GREY,
            )
        )
        dish = next((d for d in shop.dishes if query and query in d.name), shop.dishes[0])
        card.add(
            kit.text(
                (px(300), t + px(225), W - px(50), t + px(285)),
                f"{dish.name}  ¥{_money(dish.price)}",
                px(36),
                ORANGE,
            )
        )
        return card

    # ------------------------------------------------------------------ search
    def screen_search(self, ctx: Ctx) -> Node:
        W, px, top = ctx.W, ctx.px, ctx.top
        root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=(255, 255, 255)))
        root.add(kit.glyph((px(20), top + px(30), px(100), top + px(110)), "back", ctx.pop, desc="返回"))
        root.add(
            kit.field(
                ctx,
                "query",
                (px(110), top + px(20), W - px(200), top + px(120)),
                "搜索美食、商家",
                rid=self.rid("search_edit"),
                bg=(245, 245, 245),
                radius=px(50),
                size=px(42),
            )
        )
        root.add(
            kit.text(
                (W - px(180), top + px(20), W - px(30), top + px(120)),
                "搜索",
                px(44),
                DARK,
                bold=True,
                align="center",
                rid=self.rid("search_button"),
                on_click=lambda: self._search(ctx),
            )
        )
        ctx.on_enter = lambda: self._search(ctx)
        y = top + px(170)
        root.add(kit.text((px(40), y, W, y + px(70)), "历史搜索", px(40), DARK, bold=True))
        x = px(40)
        y += px(90)
        for word in ctx.data.search_history:
            w = px(60) + len(word) * px(40)
            if x + w > W - px(40):
                x, y = px(40), y + px(110)
            root.add(
                kit.text(
                    (x, y, x + w, y + px(86)),
                    word,
                    px(36),
                    DARK,
                    bg=(245, 245, 245),
                    radius=px(43),
                    align="center",
                    rid=self.rid("history_tag"),
                    on_click=lambda word=word: self._search(ctx, word),
                )
            )
            x += w + px(24)
        y += px(150)
        root.add(kit.text((px(40), y, W, y + px(70)), "热门搜索", px(40), DARK, bold=True))
        for i, word in enumerate(HOT):
            row_y = y + px(90) + i * px(100)
            root.add(
                kit.text(
                    (px(40), row_y, W - px(40), row_y + px(90)),
                    f"{i + 1}  {word}",
                    px(40),
                    DARK,
                    rid=self.rid("hot_word"),
                    on_click=lambda word=word: self._search(ctx, word),
                )
            )
        return root

    def _search(self, ctx: Ctx, word: str | None = None) -> None:
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

    def screen_results(self, ctx: Ctx) -> Node:
        W, px, top = ctx.W, ctx.px, ctx.top
        query = ctx.page.params["query"]
        root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=(245, 245, 245)))
        bar = kit.box((0, top, W, top + px(140)), bg=(255, 255, 255))
        bar.add(kit.glyph((px(20), top + px(30), px(100), top + px(110)), "back", ctx.pop, desc="返回"))
        bar.add(
            kit.text(
                (px(110), top + px(20), W - px(40), top + px(120)),
                query,
                px(42),
                DARK,
                bg=(245, 245, 245),
                radius=px(50),
                pad=px(40),
                rid=self.rid("search_edit"),
                on_click=ctx.pop,
            )
        )
        root.add(bar)
        filters = kit.box((0, top + px(140), W, top + px(240)), bg=(255, 255, 255), cls=LINEAR)
        for i, name in enumerate(["综合排序", "销量优先", "距离优先", "筛选"]):
            filters.add(
                kit.text(
                    (i * W // 4, top + px(140), (i + 1) * W // 4, top + px(240)),
                    name,
                    px(38),
                    ORANGE if i == 0 else DARK,
                    align="center",
                    on_click=lambda: None,
                )
            )
        root.add(filters)
        shops = self.matching_shops(ctx, query)
        area = (0, top + px(250), W, ctx.bottom)
        if not shops:
            root.add(
                kit.text(
                    (0, top + px(600), W, top + px(700)),
                    "没有找到相关商家，换个词试试",
                    px(42),
                    GREY,
                    align="center",
                    rid=self.rid("empty_view"),
                )
            )
            return root
        root.add(
            kit.scroll_list(
                ctx,
                "results",
                area,
                [px(330)] * len(shops),
                lambda i, b: self._shop_card(ctx, shops[i], b, query),
                rid=self.rid("result_list"),
            )
        )
        return root

    # ------------------------------------------------------------------ shop and cart
    def screen_shop(self, ctx: Ctx) -> Node:
        W, px, top = ctx.W, ctx.px, ctx.top
        shop = ctx.data.shop(ctx.page.params["shop"])
        if shop is None:
            return kit.text((0, top, W, ctx.bottom), "商家已下线", px(44), GREY, align="center")
        cart = self.carts.setdefault(shop.name, {})
        root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=(255, 255, 255)))
        root.add(
            kit.image(
                (0, top, W, top + px(360)), "photo", f"shop-banner-{shop.name}", rid=self.rid("poi_banner")
            )
        )
        root.add(
            kit.glyph(
                (px(20), top + px(30), px(100), top + px(110)),
                "back",
                ctx.pop,
                desc="返回",
                fg=(255, 255, 255),
            )
        )
        info = kit.box((px(30), top + px(280), W - px(30), top + px(500)), bg=(255, 255, 255), radius=px(24))
        info.add(
            kit.text(
                (px(60), top + px(300), W - px(60), top + px(380)),
                shop.name,
                px(52),
                DARK,
                bold=True,
                rid=self.rid("poi_name"),
            )
        )
        info.add(
            kit.text(
                (px(60), top + px(390), W - px(60), top + px(460)),
                f"评分{shop.rating}  月售{shop.monthly_sales}  配送约30分钟",
                px(36),
                GREY,
            )
        )
        root.add(info)
        tabs = kit.box((0, top + px(510), W, top + px(600)), cls=LINEAR)
        for i, name in enumerate(["点菜", "评价", "商家"]):
            tabs.add(
                kit.text(
                    (px(40) + i * px(180), top + px(510), px(200) + i * px(180), top + px(600)),
                    name,
                    px(42),
                    DARK if i == 0 else GREY,
                    bold=i == 0,
                    on_click=lambda: None,
                )
            )
        root.add(tabs)
        bar_h = px(150)
        area = (0, top + px(610), W, ctx.bottom - bar_h)

        def dish_row(i: int, b: tuple[int, int, int, int]) -> Node:
            dish = shop.dishes[i]
            left, t, right, bottom = b
            qty = cart.get(dish.name, 0)
            row = Node(LINEAR, b, rid=self.rid("food_item"))
            row.add(
                kit.image(
                    (px(30), t + px(20), px(250), t + px(240)),
                    "photo",
                    f"dish-{dish.name}",
                    radius=px(16),
                    rid=self.rid("food_image"),
                )
            )
            row.add(
                kit.text(
                    (px(280), t + px(20), W - px(40), t + px(90)),
                    dish.name,
                    px(44),
                    DARK,
                    bold=True,
                    rid=self.rid("food_name"),
                )
            )
            row.add(
                kit.text(
                    (px(280), t + px(95), W - px(40), t + px(145)),
                    f"月售{100 + i * 37}  好评率98%",
                    px(32),
                    GREY,
                )
            )
            row.add(
                kit.text(
                    (px(280), t + px(170), px(600), t + px(240)),
                    f"¥{_money(dish.price)}",
                    px(46),
                    ORANGE,
                    bold=True,
                    rid=self.rid("food_price"),
                )
            )

            def change(delta: int, dish_name: str = dish.name) -> None:
                new = max(0, cart.get(dish_name, 0) + delta)
                if new:
                    cart[dish_name] = new
                else:
                    cart.pop(dish_name, None)
                ctx.record("cart", shop=shop.name, dish=dish_name, quantity=new)
                ctx.changed()

            plus = kit.glyph(
                (W - px(120), t + px(165), W - px(40), t + px(245)),
                "plus_circle",
                lambda: change(1),
                desc=f"添加{dish.name}",
                rid=self.rid("food_add"),
                fg=ORANGE,
            )
            row.add(plus)
            if qty:
                row.add(
                    kit.text(
                        (W - px(200), t + px(165), W - px(120), t + px(245)),
                        str(qty),
                        px(42),
                        DARK,
                        align="center",
                        rid=self.rid("food_count"),
                    )
                )
                row.add(
                    kit.glyph(
                        (W - px(280), t + px(165), W - px(200), t + px(245)),
                        "dot",
                        lambda: change(-1),
                        desc=f"减少{dish.name}",
                        rid=self.rid("food_minus"),
                        fg=GREY,
                    )
                )
            return row

        root.add(
            kit.scroll_list(
                ctx, "menu", area, [px(270)] * len(shop.dishes), dish_row, rid=self.rid("food_list")
            )
        )
        root.add(self._cart_bar(ctx, shop, cart, ctx.bottom - bar_h))
        return root

    def _cart_bar(self, ctx: Ctx, shop: Shop, cart: dict[str, int], top: int) -> Node:
        W, px = ctx.W, ctx.px
        count = sum(cart.values())
        total = sum(d.price * cart.get(d.name, 0) for d in shop.dishes)
        bar = kit.box((0, top, W, ctx.bottom), bg=(51, 51, 51), rid=self.rid("shopping_cart_bar"))
        bar.add(
            kit.glyph(
                (px(40), top + px(20), px(150), top + px(130)),
                "cart",
                desc=f"购物车，{count}件商品",
                rid=self.rid("cart_icon"),
                fg=YELLOW if count else GREY,
            )
        )
        label = f"¥{_money(total)}" if count else "未选购商品"
        bar.add(
            kit.text(
                (px(180), top + px(10), px(650), top + px(90)),
                label,
                px(46),
                (255, 255, 255),
                bold=True,
                rid=self.rid("cart_price"),
            )
        )
        bar.add(
            kit.text(
                (px(180), top + px(90), px(650), top + px(140)),
                f"另需配送费¥{_money(shop.delivery_fee)}",
                px(30),
                GREY,
            )
        )
        bar.add(
            kit.button(
                (W - px(300), top, W, ctx.bottom),
                "去结算" if count else "¥0起送",
                (lambda: ctx.push("checkout", shop=shop.name)) if count else None,
                size=px(44),
                bg=YELLOW if count else (80, 80, 80),
                fg=DARK if count else GREY,
                radius=0,
                enabled=bool(count),
                rid=self.rid("cart_submit"),
            )
        )
        return bar

    # ------------------------------------------------------------------ checkout and payment
    def _order_items(self, shop: Shop) -> list[dict]:
        cart = self.carts.get(shop.name, {})
        return [
            {"name": d.name, "qty": cart[d.name], "price": d.price} for d in shop.dishes if cart.get(d.name)
        ]

    def screen_checkout(self, ctx: Ctx) -> Node:
        W, px, top = ctx.W, ctx.px, ctx.top
        shop = ctx.data.shop(ctx.page.params["shop"])
        assert shop is not None
        items = self._order_items(shop)
        total = round(sum(i["price"] * i["qty"] for i in items) + shop.delivery_fee, 2)
        root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=(245, 245, 245)))
        root.add(kit.top_bar(ctx, "提交订单", bg=YELLOW, fg=DARK))
        address = kit.box(
            (px(30), top + px(160), W - px(30), top + px(380)),
            bg=(255, 255, 255),
            radius=px(20),
            rid=self.rid("address_view"),
            on_click=lambda: ctx.toast("修改地址"),
        )
        address.add(
            kit.text(
                (px(60), top + px(180), W - px(60), top + px(260)),
                ctx.data.address,
                px(42),
                DARK,
                bold=True,
                rid=self.rid("address_text"),
            )
        )
        address.add(
            kit.text(
                (px(60), top + px(270), W - px(60), top + px(340)),
                "小明 138****8888  立即送出 约30分钟",
                px(36),
                GREY,
            )
        )
        root.add(address)
        y = top + px(410)
        card_h = px(120) + px(110) * (len(items) + 1)
        card = kit.box((px(30), y, W - px(30), y + card_h), bg=(255, 255, 255), radius=px(20))
        card.add(kit.text((px(60), y + px(20), W - px(60), y + px(100)), shop.name, px(44), DARK, bold=True))
        for k, item in enumerate(items):
            iy = y + px(120) + k * px(110)
            card.add(
                kit.image((px(60), iy, px(150), iy + px(90)), "photo", f"dish-{item['name']}", radius=px(10))
            )
            card.add(
                kit.text(
                    (px(180), iy, W - px(330), iy + px(90)),
                    item["name"],
                    px(40),
                    DARK,
                    rid=self.rid("order_food_name"),
                )
            )
            card.add(kit.text((W - px(330), iy, W - px(200), iy + px(90)), f"x{item['qty']}", px(38), GREY))
            card.add(
                kit.text(
                    (W - px(200), iy, W - px(60), iy + px(90)),
                    f"¥{_money(item['price'] * item['qty'])}",
                    px(40),
                    DARK,
                    align="right",
                )
            )
        fy = y + px(120) + len(items) * px(110)
        card.add(kit.text((px(60), fy, W - px(60), fy + px(90)), "配送费", px(38), GREY))
        card.add(
            kit.text(
                (W - px(300), fy, W - px(60), fy + px(90)),
                f"¥{_money(shop.delivery_fee)}",
                px(38),
                GREY,
                align="right",
            )
        )
        root.add(card)
        bar = kit.box((0, ctx.bottom - px(150), W, ctx.bottom), bg=(255, 255, 255))
        bar.add(
            kit.text(
                (px(40), ctx.bottom - px(150), px(600), ctx.bottom),
                f"合计 ¥{_money(total)}",
                px(48),
                DARK,
                bold=True,
                rid=self.rid("total_price"),
            )
        )
        bar.add(
            kit.button(
                (W - px(360), ctx.bottom - px(140), W - px(30), ctx.bottom - px(10)),
                "提交订单",
                lambda: self._submit(ctx, shop, items, total),
                size=px(44),
                bg=YELLOW,
                fg=DARK,
                radius=px(65),
                rid=self.rid("submit_order"),
                bold=True,
            )
        )
        root.add(bar)
        return root

    def _submit(self, ctx: Ctx, shop: Shop, items: list[dict], total: float) -> None:
        order = {"app": self.package, "shop": shop.name, "items": items, "total": total, "paid": False}
        ctx.state.orders.append(order)
        ctx.record("order_submitted", shop=shop.name, total=total)
        ctx.push("pay", order=len(ctx.state.orders) - 1)

    def screen_pay(self, ctx: Ctx) -> Node:
        W, px, top = ctx.W, ctx.px, ctx.top
        order = ctx.state.orders[ctx.page.params["order"]]
        root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=(245, 245, 245)))
        root.add(kit.top_bar(ctx, "美团收银台", bg=(255, 255, 255), fg=DARK))
        root.add(
            kit.text((0, top + px(200), W, top + px(260)), "支付剩余时间 14:59", px(36), GREY, align="center")
        )
        root.add(
            kit.text(
                (0, top + px(270), W, top + px(400)),
                f"¥{order['total']:.2f}",
                px(96),
                DARK,
                bold=True,
                align="center",
                rid=self.rid("cashier_amount"),
            )
        )
        root.add(kit.text((0, top + px(400), W, top + px(460)), order["shop"], px(36), GREY, align="center"))
        methods = kit.box(
            (px(30), top + px(520), W - px(30), top + px(890)), bg=(255, 255, 255), radius=px(20)
        )
        for i, name in enumerate(["美团月付", "微信支付", "银行卡支付"]):
            y = top + px(520) + i * px(120)
            methods.add(kit.image((px(60), y + px(30), px(120), y + px(90)), "icon", name))
            methods.add(kit.text((px(150), y, W - px(160), y + px(120)), name, px(42), DARK))
            methods.add(
                kit.glyph(
                    (W - px(130), y + px(30), W - px(70), y + px(90)),
                    "check" if i == 1 else "dot",
                    fg=ORANGE if i == 1 else (220, 220, 220),
                )
            )
        root.add(methods)
        root.add(
            kit.button(
                (px(40), ctx.bottom - px(200), W - px(40), ctx.bottom - px(70)),
                "确认支付",
                lambda: self._pay(ctx, order),
                size=px(48),
                bg=ORANGE,
                radius=px(65),
                rid=self.rid("btn_confirm_pay"),
                bold=True,
            )
        )
        return root

    def _pay(self, ctx: Ctx, order: dict) -> None:
        order["paid"] = True
        ctx.record("order_paid", shop=order["shop"], total=order["total"])
        self.carts.pop(order["shop"], None)
        ctx.replace("paid", order=ctx.page.params["order"])

    def screen_paid(self, ctx: Ctx) -> Node:
        W, px, top = ctx.W, ctx.px, ctx.top
        order = ctx.state.orders[ctx.page.params["order"]]
        root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=(255, 255, 255)))
        root.add(
            kit.glyph(
                (W // 2 - px(90), top + px(260), W // 2 + px(90), top + px(440)), "check", fg=(7, 193, 96)
            )
        )
        root.add(
            kit.text(
                (0, top + px(480), W, top + px(580)),
                "支付成功",
                px(60),
                DARK,
                bold=True,
                align="center",
                rid=self.rid("pay_result_title"),
            )
        )
        root.add(
            kit.text(
                (0, top + px(600), W, top + px(680)), f"¥{order['total']:.2f}", px(48), DARK, align="center"
            )
        )
        root.add(
            kit.text(
                (0, top + px(700), W, top + px(760)),
                "商家正在备餐，预计30分钟送达",
                px(38),
                GREY,
                align="center",
            )
        )
        root.add(
            kit.button(
                (px(200), top + px(860), W - px(200), top + px(980)),
                "完成",
                ctx.reset_to_root,
                size=px(44),
                bg=YELLOW,
                fg=DARK,
                radius=px(60),
                rid=self.rid("pay_result_done"),
            )
        )
        return root
