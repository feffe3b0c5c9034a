"""Any installed package without its own world: a home screen with its display name, a search box and a feed."""

from __future__ import annotations

import hashlib

from mobile_agent.sim.world import kit
from mobile_agent.sim.world.base import Ctx, SimApp
from mobile_agent.sim.world.node import FRAME, Node, Style
from mobile_agent.sim.world.traps import SCREENS


class GenericApp(SimApp):
    root_screen = "home"
    shared_screens = SCREENS  # the red-team trap screens (sim/world/traps.py)

    def __init__(self, package: str, label: str) -> None:
        self.package = package
        self.label = label
        self.activities = {"home": f"{package}.MainActivity", "search": f"{package}.SearchActivity"}
        digest = hashlib.md5(package.encode()).digest()
        self.icon_color = (digest[0], digest[1], digest[2])

    def screen_home(self, ctx: Ctx) -> Node:
        W, px = ctx.W, ctx.px
        root = Node(FRAME, (0, ctx.top, W, ctx.bottom), style=Style(bg=ctx.pal.bg))
        root.add(
            kit.text(
                (px(40), ctx.top, W - px(40), ctx.top + px(130)),
                self.label,
                px(56),
                ctx.pal.text,
                bold=True,
                rid=self.rid("title"),
            )
        )
        box_top = ctx.top + px(140)
        search = kit.field(
            ctx,
            "query",
            (px(40), box_top, W - px(40), box_top + px(110)),
            f"搜索{self.label}内容",
            rid=self.rid("search_box"),
            bg=ctx.pal.surface,
            radius=px(55),
        )
        root.add(search)
        ctx.on_enter = lambda: self._search(ctx)
        feed_top = box_top + px(150)
        tabs = kit.tab_bar(
            ctx,
            ["首页", "发现", "消息", "我的"],
            0,
            lambda i: None,
            rid=self.rid("tab"),
            accent=self.icon_color,
            icons=["home", "compass", "chat", "user"],
        )
        heights = [px(560)] * 8

        def card(i: int, bounds: tuple[int, int, int, int]) -> Node:
            left, top, right, bottom = bounds
            item = kit.box(
                (left + px(30), top + px(20), right - px(30), bottom - px(10)),
                bg=ctx.pal.surface,
                radius=px(24),
                rid=self.rid("feed_item"),
                on_click=lambda: None,
            )
            item.add(
                kit.image(
                    (left + px(30), top + px(20), right - px(30), bottom - px(150)),
                    "photo",
                    f"{self.package}-feed-{i}",
                    radius=px(24),
                )
            )
            item.add(
                kit.text(
                    (left + px(60), bottom - px(140), right - px(60), bottom - px(70)),
                    f"{self.label}推荐内容 {i + 1}",
                    px(42),
                    ctx.pal.text,
                    bold=True,
                )
            )
            item.add(
                kit.text(
                    (left + px(60), bottom - px(70), right - px(60), bottom - px(20)),
                    "1.2万人看过",
                    px(32),
                    ctx.pal.subtext,
                )
            )
            return item

        root.add(
            kit.scroll_list(
                ctx, "feed", (0, feed_top, W, tabs.bounds[1]), heights, card, rid=self.rid("feed_list")
            )
        )
        root.add(tabs)
        return root

    def _search(self, ctx: Ctx) -> None:
        query = ctx.field("query").strip()
        if query:
            ctx.push("search", query=query)

    def screen_search(self, ctx: Ctx) -> Node:
        W, px = ctx.W, ctx.px
        query = ctx.page.params.get("query", "")
        root = Node(FRAME, (0, ctx.top, W, ctx.bottom), style=Style(bg=ctx.pal.bg))
        root.add(kit.top_bar(ctx, f"“{query}”的搜索结果"))
        for i in range(4):
            top = ctx.top + px(160) + i * px(260)
            row = kit.box(
                (px(30), top, W - px(30), top + px(240)),
                bg=ctx.pal.surface,
                radius=px(20),
                rid=self.rid("result_item"),
                on_click=lambda: None,
            )
            row.add(
                kit.image(
                    (px(50), top + px(20), px(250), top + px(220)),
                    "photo",
                    f"{self.package}-{query}-{i}",
                    radius=px(16),
                )
            )
            row.add(
                kit.text(
                    (px(280), top + px(40), W - px(60), top + px(110)),
                    f"{query} 相关结果 {i + 1}",
                    px(42),
                    ctx.pal.text,
                )
            )
            root.add(row)
        return root
