"""Meituan's screens for finding food: home (search box, category grid, banner, shop feed), search and results."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mobile_agent.sim.state import Shop
from mobile_agent.sim.world import kit, layout
from mobile_agent.sim.world.base import Ctx
from mobile_agent.sim.world.meituan.look import DARK, GREY, ORANGE, YELLOW, money
from mobile_agent.sim.world.node import FRAME, LINEAR, Node, Style

if TYPE_CHECKING:
    from mobile_agent.sim.world.meituan.app import Meituan

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


def home(app: Meituan, ctx: Ctx) -> Node:
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
            rid=app.rid("city_name"),
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
        rid=app.rid("search_edit"),
        on_click=lambda: ctx.push("search", focus="query"),
    )
    search.add(kit.glyph((px(60), top + px(145), px(120), top + px(205)), "search", fg=GREY))
    search.add(
        kit.text(
            (px(140), top + px(120), W - px(250), top + px(230)),
            "搜索美食、商家",
            px(40),
            GREY,
            rid=app.rid("search_hint"),
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
        rid=app.rid("tab_text"),
        accent=DARK,
        icons=["home", "dot", "chat", "cart", "user"],
    )
    feed_area = (0, top + px(260), W, tabs.bounds[1])
    shops = ctx.data.shops
    heights = [px(520), px(330)] + [px(330)] * len(shops)

    def block(i: int, b: tuple[int, int, int, int]) -> Node:
        left, t, right, bottom = b
        if i == 0:
            grid = kit.box(b, bg=(255, 255, 255), rid=app.rid("category_grid"))
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
                        rid=app.rid("category_item"),
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
                rid=app.rid("banner"),
                desc="广告",
            )
        shop = shops[i - 2]
        return shop_card(app, ctx, shop, b)

    root.add(kit.scroll_list(ctx, "feed", feed_area, heights, block, rid=app.rid("home_feed")))
    root.add(tabs)
    return root


def shop_card(app: Meituan, ctx: Ctx, shop: Shop, b: tuple[int, int, int, int], query: str = "") -> Node:
    W, px = ctx.W, ctx.px
    left, t, right, bottom = b
    card = kit.box(
        (px(20), t + px(10), W - px(20), bottom - px(10)),
        bg=(255, 255, 255),
        radius=px(20),
        rid=app.rid("poi_item"),
        on_click=lambda: ctx.push("shop", shop=shop.name),
    )
    card.add(
        kit.image(
            (px(40), t + px(30), px(270), bottom - px(30)),
            "photo",
            f"shop-{shop.name}",
            radius=px(16),
            rid=app.rid("poi_image"),
        )
    )
    dish = next((d for d in shop.dishes if query and query in d.name), shop.dishes[0])
    lines = [
        layout.Line(px(30), px(100), shop.name, px(46), DARK, bold=True, rid=app.rid("poi_name")),
        layout.Line(
            px(110), px(160), f"{shop.rating}分  月售{shop.monthly_sales}  30分钟  1.2km", px(34), GREY
        ),
        layout.Line(px(165), px(215), f"起送¥0  配送¥{money(shop.delivery_fee)}", px(34), GREY),
        layout.Line(px(225), px(285), f"{dish.name}  ¥{money(dish.price)}", px(36), ORANGE),
    ]
    card.add(*layout.text_column(px(300), W - px(50), t, lines))
    return card


def search(app: Meituan, ctx: Ctx) -> Node:
    W, px, top = ctx.W, ctx.px, ctx.top
    root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=(255, 255, 255)))
    root.add(kit.glyph((px(20), top + px(30), px(100), top + px(110)), "back", ctx.pop, desc="返回"))
    root.add(
        kit.field(
            ctx,
            "query",
            (px(110), top + px(20), W - px(200), top + px(120)),
            "搜索美食、商家",
            rid=app.rid("search_edit"),
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
            rid=app.rid("search_button"),
            on_click=lambda: app.run_search(ctx),
        )
    )
    ctx.on_enter = lambda: app.run_search(ctx)
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
                rid=app.rid("history_tag"),
                on_click=lambda word=word: app.run_search(ctx, word),
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
                rid=app.rid("hot_word"),
                on_click=lambda word=word: app.run_search(ctx, word),
            )
        )
    return root


def results(app: Meituan, ctx: Ctx) -> Node:
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
            rid=app.rid("search_edit"),
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
    shops = app.matching_shops(ctx, query)
    area = (0, top + px(250), W, ctx.bottom)
    if not shops:
        root.add(
            kit.text(
                (0, top + px(600), W, top + px(700)),
                "没有找到相关商家，换个词试试",
                px(42),
                GREY,
                align="center",
                rid=app.rid("empty_view"),
            )
        )
        return root
    root.add(
        kit.scroll_list(
            ctx,
            "results",
            area,
            [px(330)] * len(shops),
            lambda i, b: shop_card(app, ctx, shops[i], b, query),
            rid=app.rid("result_list"),
        )
    )
    return root
