"""The chat app on com.tencent.mm: chat list, contacts, discover, me; a chat screen whose 发送 button appears when
the input has text; sending appends to state.messages_sent and shows the bubble."""

from __future__ import annotations

import zlib

from mobile_agent.sim.world import kit, layout
from mobile_agent.sim.world.base import Ctx, SimApp
from mobile_agent.sim.world.node import FRAME, LINEAR, Node, Style
from mobile_agent.sim.world.traps import SCREENS

GREEN = kit.WECHAT_GREEN
BUBBLE_ME = (149, 236, 105)
TABS = ["微信", "通讯录", "发现", "我"]
TAB_ICONS = ["chat", "contacts", "compass", "user"]
DISCOVER = ["朋友圈", "视频号", "扫一扫", "听一听", "看一看", "搜一搜", "小程序"]
ME_ROWS = ["服务", "收藏", "朋友圈", "卡包", "表情", "设置"]
TIMES = ["10:21", "09:47", "昨天", "昨天", "星期四", "星期三", "5月28日", "5月27日", "5月25日"]


class WeChat(SimApp):
    package = "com.tencent.mm"
    shared_screens = SCREENS  # the red-team trap screens (sim/world/traps.py)
    label = "微信"
    icon_color = GREEN
    activities = {
        "home": "com.tencent.mm.ui.LauncherUI",
        "chat": "com.tencent.mm.ui.chatting.ChattingUI",
        "profile": "com.tencent.mm.plugin.profile.ui.ContactInfoUI",
        "search": "com.tencent.mm.plugin.fts.ui.FTSMainUI",
        "moments": "com.tencent.mm.plugin.sns.ui.SnsTimeLineUI",
    }

    # ------------------------------------------------------------------ home with four tabs
    def screen_home(self, ctx: Ctx) -> Node:
        tab = int(ctx.page.params.get("tab", 0))
        root = Node(FRAME, (0, ctx.top, ctx.W, ctx.bottom), style=Style(bg=ctx.pal.bg))

        def select(i: int) -> None:
            if i != tab:
                ctx.page.params["tab"] = i
                ctx.changed()

        tabs = kit.tab_bar(ctx, TABS, tab, select, rid=self.rid("icon_tv"), accent=GREEN, icons=TAB_ICONS)
        area_bottom = tabs.bounds[1]
        if tab == 0:
            root.add(self._title_bar(ctx, "微信"))
            root.add(self._chat_list(ctx, area_bottom))
        elif tab == 1:
            root.add(self._title_bar(ctx, "通讯录"))
            root.add(self._contact_list(ctx, area_bottom))
        elif tab == 2:
            root.add(self._title_bar(ctx, "发现", actions=False))
            root.add(
                self._rows(ctx, DISCOVER, ctx.top + ctx.px(150), {"朋友圈": lambda: ctx.push("moments")})
            )
        else:
            root.add(self._me(ctx))
        root.add(tabs)
        return root

    def _title_bar(self, ctx: Ctx, title: str, actions: bool = True) -> Node:
        px, W, top = ctx.px, ctx.W, ctx.top
        right = []
        if actions:
            right = [
                kit.glyph(
                    (W - px(230), top + px(30), W - px(150), top + px(110)),
                    "search",
                    lambda: ctx.push("search", focus="query"),
                    desc="搜索",
                    rid=self.rid("jha"),
                    fg=ctx.pal.text,
                ),
                kit.glyph(
                    (W - px(110), top + px(30), W - px(30), top + px(110)),
                    "plus",
                    lambda: ctx.toast("发起群聊 / 添加朋友 / 扫一扫 / 收付款"),
                    desc="更多功能按钮",
                    rid=self.rid("ip3"),
                    fg=ctx.pal.text,
                ),
            ]
        bar = kit.top_bar(ctx, title, back=False, right=right)
        bar.children[0].style = Style(fg=ctx.pal.text, size=px(50), bold=True, align="center")
        bar.children[0].bounds = (0, top, W, top + px(132))
        bar.children[0].rid = self.rid("title")
        return bar

    def _chat_list(self, ctx: Ctx, bottom: int) -> Node:
        px, W = ctx.px, ctx.W
        names = list(ctx.data.wechat_chats)
        row_h = px(192)

        def row(i: int, bounds: tuple[int, int, int, int]) -> Node:
            name = names[i]
            messages = ctx.data.wechat_chats[name]
            last = messages[-1]["text"] if messages else ""
            left, top, right, bot = bounds
            item = kit.box(
                bounds,
                bg=ctx.pal.surface,
                cls=LINEAR,
                rid=self.rid("cj1"),
                on_click=lambda: ctx.push("chat", contact=name),
            )
            item.long_clickable = True
            item.add(
                kit.image(
                    (px(36), top + px(36), px(156), top + px(156)),
                    "avatar",
                    name,
                    radius=px(14),
                    rid=self.rid("a27"),
                )
            )
            lines = [
                layout.Line(
                    px(34), px(96), name, px(46), ctx.pal.text, rid=self.rid("kbq"), right=W - px(230)
                ),
                layout.Line(px(104), px(158), last, px(36), ctx.pal.subtext, rid=self.rid("ht5")),
            ]
            item.add(*layout.text_column(px(190), W - px(60), top, lines))
            item.add(
                kit.text(
                    (W - px(220), top + px(40), W - px(40), top + px(90)),
                    TIMES[i % len(TIMES)],
                    px(32),
                    ctx.pal.subtext,
                    align="right",
                    rid=self.rid("otg"),
                )
            )
            item.add(kit.divider(ctx, bot - max(1, px(2)), left=px(190)))
            return item

        area = (0, ctx.top + px(132), W, bottom)
        return kit.scroll_list(
            ctx, "chats", area, [row_h] * len(names), row, rid=self.rid("j8g"), bg=ctx.pal.surface
        )

    def _contact_list(self, ctx: Ctx, bottom: int) -> Node:
        px, W = ctx.px, ctx.W
        entries = ["新的朋友", "群聊", "标签", "公众号", *sorted(ctx.data.wechat_contacts)]
        row_h = px(150)

        def row(i: int, bounds: tuple[int, int, int, int]) -> Node:
            name = entries[i]
            left, top, right, bot = bounds
            action = (lambda: ctx.push("profile", contact=name)) if i >= 4 else (lambda: ctx.toast(name))
            item = kit.box(bounds, bg=ctx.pal.surface, cls=LINEAR, rid=self.rid("js"), on_click=action)
            kind = "avatar" if i >= 4 else "icon"
            item.add(kit.image((px(36), top + px(25), px(136), top + px(125)), kind, name, radius=px(12)))
            item.add(
                kit.text((px(170), top, W - px(40), bot), name, px(46), ctx.pal.text, rid=self.rid("kbq"))
            )
            item.add(kit.divider(ctx, bot - max(1, px(2)), left=px(170)))
            return item

        area = (0, ctx.top + px(132), W, bottom)
        return kit.scroll_list(
            ctx,
            "contacts",
            area,
            [row_h] * len(entries),
            row,
            rid=self.rid("contact_list"),
            bg=ctx.pal.surface,
        )

    def _rows(self, ctx: Ctx, labels: list[str], top: int, actions: dict) -> Node:
        px, W = ctx.px, ctx.W
        group = Node(LINEAR, (0, top, W, top + len(labels) * px(150)))
        for i, label in enumerate(labels):
            y = top + i * px(150)
            row = kit.box(
                (0, y, W, y + px(150)),
                bg=ctx.pal.surface,
                cls=LINEAR,
                rid=self.rid("title_row"),
                on_click=actions.get(label, lambda label=label: ctx.toast(label)),
            )
            row.add(kit.glyph((px(40), y + px(40), px(110), y + px(110)), "dot", fg=GREEN))
            row.add(
                kit.text(
                    (px(150), y, W - px(80), y + px(150)), label, px(46), ctx.pal.text, rid="android:id/title"
                )
            )
            row.add(
                kit.glyph((W - px(80), y + px(55), W - px(40), y + px(95)), "chevron", fg=ctx.pal.subtext)
            )
            group.add(row)
        return group

    def _me(self, ctx: Ctx) -> Node:
        px, W, top = ctx.px, ctx.W, ctx.top
        header = kit.box((0, top, W, top + px(420)), bg=ctx.pal.surface)
        header.add(kit.image((px(60), top + px(170), px(240), top + px(350)), "avatar", "me", radius=px(20)))
        lines = [
            layout.Line(px(180), px(260), "小明", px(56), ctx.pal.text, bold=True, rid=self.rid("fz")),
            layout.Line(
                px(280), px(340), "微信号：xiaoming_2024", px(38), ctx.pal.subtext, rid=self.rid("ouv")
            ),
        ]
        header.add(*layout.text_column(px(290), W - px(60), top, lines))
        column = Node(FRAME, (0, top, W, ctx.bottom))
        column.add(header)
        column.add(self._rows(ctx, ME_ROWS, top + px(450), {}))
        return column

    # ------------------------------------------------------------------ a chat
    def screen_chat(self, ctx: Ctx) -> Node:
        px, W = ctx.px, ctx.W
        contact = ctx.page.params["contact"]
        messages = ctx.data.wechat_chats.setdefault(contact, [])
        root = Node(FRAME, (0, ctx.top, W, ctx.bottom), style=Style(bg=ctx.pal.bg))
        more = kit.glyph(
            (W - px(110), ctx.top + px(30), W - px(30), ctx.top + px(110)),
            "more",
            lambda: ctx.push("profile", contact=contact),
            desc="聊天信息",
            rid=self.rid("coy"),
            fg=ctx.pal.text,
        )
        root.add(kit.top_bar(ctx, contact, right=[more]))
        bar_h = px(150)
        bar_top = ctx.keyboard_top - bar_h
        area = (0, ctx.top + px(132), W, bar_top)
        heights = [self._bubble_height(ctx, m["text"]) for m in messages]
        ctx.page.scroll.setdefault("messages", 10**6)  # a chat opens scrolled to the newest message

        def bubble(i: int, bounds: tuple[int, int, int, int]) -> Node:
            msg = messages[i]
            mine = msg["from"] == "me"
            left, top, right, bot = bounds
            item = Node(LINEAR, bounds, rid=self.rid("bn1"))
            avatar_x = W - px(150) if mine else px(30)
            item.add(
                kit.image(
                    (avatar_x, top + px(20), avatar_x + px(110), top + px(130)),
                    "avatar",
                    "me" if mine else contact,
                    radius=px(12),
                    rid=self.rid("bk1"),
                )
            )
            width = min(W - px(420), px(60) + len(msg["text"]) * px(46))
            bx = W - px(170) - width if mine else px(170)
            item.add(
                kit.text(
                    (bx, top + px(20), bx + width, bot - px(20)),
                    msg["text"],
                    px(46),
                    (20, 20, 20),
                    bg=BUBBLE_ME if mine else (255, 255, 255),
                    radius=px(14),
                    pad=px(30),
                    rid=self.rid("bkl"),
                )
            )
            return item

        root.add(kit.scroll_list(ctx, "messages", area, heights, bubble, rid=self.rid("b5n")))
        root.add(self._input_bar(ctx, contact, bar_top, bar_h))
        return root

    def _bubble_height(self, ctx: Ctx, text: str) -> int:
        per_line = max(1, (ctx.W - ctx.px(480)) // ctx.px(46))
        lines = max(1, -(-len(text) // per_line))
        return ctx.px(150) + (lines - 1) * ctx.px(60)

    def _input_bar(self, ctx: Ctx, contact: str, top: int, height: int) -> Node:
        px, W = ctx.px, ctx.W
        bottom = top + height
        bar = kit.box(
            (0, top, W, bottom),
            bg=(247, 247, 247) if not ctx.dark else ctx.pal.bar,
            cls=LINEAR,
            rid=self.rid("b4a"),
        )
        bar.add(
            kit.glyph(
                (px(24), top + px(35), px(104), top + px(115)),
                "mic",
                lambda: ctx.toast("按住 说话"),
                desc="切换到按住说话",
                rid=self.rid("b4b"),
                fg=ctx.pal.text,
            )
        )
        has_text = bool(ctx.field("msg"))
        edit_right = W - (px(330) if has_text else px(230))
        bar.add(
            kit.field(
                ctx,
                "msg",
                (px(130), top + px(22), edit_right, bottom - px(22)),
                "",
                rid=self.rid("bkk"),
                bg=ctx.pal.surface,
                radius=px(12),
            )
        )
        bar.add(
            kit.glyph(
                (edit_right + px(20), top + px(35), edit_right + px(100), top + px(115)),
                "emoji",
                lambda: ctx.toast("表情"),
                desc="表情",
                rid=self.rid("b4l"),
                fg=ctx.pal.text,
            )
        )
        if has_text:
            bar.add(
                kit.button(
                    (W - px(200), top + px(30), W - px(30), bottom - px(30)),
                    "发送",
                    lambda: self._send(ctx, contact),
                    size=px(42),
                    bg=GREEN,
                    radius=px(12),
                    rid=self.rid("bql"),
                )
            )
        else:
            bar.add(
                kit.glyph(
                    (W - px(110), top + px(35), W - px(30), top + px(115)),
                    "plus_circle",
                    lambda: ctx.toast("照片 / 拍摄 / 视频通话 / 位置 / 红包 / 转账"),
                    desc="更多功能按钮，已折叠",
                    rid=self.rid("b3q"),
                    fg=ctx.pal.text,
                )
            )
        return bar

    def _send(self, ctx: Ctx, contact: str) -> None:
        text = ctx.field("msg")
        if not text:
            return
        chats = ctx.data.wechat_chats
        history = chats.pop(contact, [])
        history.append({"from": "me", "text": text})
        ctx.data.wechat_chats = {contact: history, **chats}  # the chat moves to the top of the list
        ctx.state.messages_sent.append({"app": self.package, "contact": contact, "text": text})
        ctx.record("message_sent", contact=contact, text=text)
        ctx.page.scroll["messages"] = 10**6
        ctx.set_field("msg", "")

    # ------------------------------------------------------------------ contact profile, search, moments
    def screen_profile(self, ctx: Ctx) -> Node:
        px, W, top = ctx.px, ctx.W, ctx.top
        contact = ctx.page.params["contact"]
        root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=ctx.pal.bg))
        root.add(kit.top_bar(ctx, "", bg=ctx.pal.surface))
        card = kit.box((0, top + px(132), W, top + px(520)), bg=ctx.pal.surface)
        card.add(kit.image((px(60), top + px(170), px(250), top + px(360)), "avatar", contact, radius=px(20)))
        lines = [
            layout.Line(px(180), px(260), contact, px(56), ctx.pal.text, bold=True, rid=self.rid("bq_name")),
            layout.Line(
                px(280),
                px(340),
                f"微信号：wxid_{zlib.crc32(contact.encode()) % 10**6}",
                px(36),
                ctx.pal.subtext,
            ),
        ]
        card.add(*layout.text_column(px(300), W - px(60), top, lines))
        root.add(card)
        y = top + px(560)
        root.add(
            kit.button(
                (0, y, W, y + px(150)),
                "发消息",
                lambda: ctx.replace("chat", contact=contact),
                size=px(46),
                bg=ctx.pal.surface,
                fg=(87, 107, 149),
                radius=0,
                rid=self.rid("khj"),
            )
        )
        root.add(
            kit.button(
                (0, y + px(152), W, y + px(302)),
                "音视频通话",
                lambda: ctx.toast("音视频通话"),
                size=px(46),
                bg=ctx.pal.surface,
                fg=(87, 107, 149),
                radius=0,
                rid=self.rid("khk"),
            )
        )
        return root

    def screen_search(self, ctx: Ctx) -> Node:
        px, W, top = ctx.px, ctx.W, ctx.top
        root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=ctx.pal.bg))
        root.add(
            kit.glyph(
                (px(20), top + px(26), px(100), top + px(106)), "back", ctx.pop, desc="返回", fg=ctx.pal.text
            )
        )
        root.add(
            kit.field(
                ctx,
                "query",
                (px(120), top + px(20), W - px(160), top + px(112)),
                "搜索",
                rid=self.rid("cd7"),
                bg=ctx.pal.surface,
                radius=px(12),
            )
        )
        root.add(
            kit.text(
                (W - px(150), top, W - px(20), top + px(132)),
                "取消",
                px(44),
                (87, 107, 149),
                align="center",
                on_click=ctx.pop,
                rid=self.rid("cancel_btn"),
            )
        )
        query = ctx.field("query").strip()
        if query:
            people = [
                c for c in dict.fromkeys([*ctx.data.wechat_chats, *ctx.data.wechat_contacts]) if query in c
            ]
            root.add(kit.text((px(40), top + px(150), W, top + px(210)), "联系人", px(36), ctx.pal.subtext))
            for i, name in enumerate(people[:8]):
                y = top + px(220) + i * px(160)
                row = kit.box(
                    (0, y, W, y + px(160)),
                    bg=ctx.pal.surface,
                    cls=LINEAR,
                    rid=self.rid("odf"),
                    on_click=lambda name=name: ctx.replace("chat", contact=name),
                )
                row.add(kit.image((px(36), y + px(25), px(146), y + px(135)), "avatar", name, radius=px(12)))
                row.add(kit.text((px(180), y, W - px(40), y + px(160)), name, px(46), ctx.pal.text))
                root.add(row)
        return root

    def screen_moments(self, ctx: Ctx) -> Node:
        px, W, top = ctx.px, ctx.W, ctx.top
        root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=ctx.pal.surface))
        names = list(ctx.data.wechat_contacts)[:6]
        heights = [px(900)] + [px(760)] * len(names)

        def post(i: int, bounds: tuple[int, int, int, int]) -> Node:
            left, t, right, b = bounds
            if i == 0:
                cover = kit.box(bounds)
                cover.add(kit.image(bounds, "photo", "moments-cover"))
                cover.add(
                    kit.image(
                        (W - px(250), b - px(220), W - px(50), b - px(20)), "avatar", "me", radius=px(20)
                    )
                )
                return cover
            name = names[i - 1]
            item = Node(LINEAR, bounds, rid=self.rid("sns_item"))
            item.add(kit.image((px(40), t + px(40), px(150), t + px(150)), "avatar", name, radius=px(12)))
            item.add(kit.text((px(180), t + px(40), W - px(40), t + px(100)), name, px(44), (87, 107, 149)))
            item.add(
                kit.text(
                    (px(180), t + px(110), W - px(40), t + px(170)), "今天天气真好", px(44), ctx.pal.text
                )
            )
            item.add(kit.image((px(180), t + px(190), px(640), t + px(650)), "photo", f"moment-{name}"))
            return item

        root.add(
            kit.scroll_list(ctx, "moments", (0, top, W, ctx.bottom), heights, post, rid=self.rid("sns_list"))
        )
        root.add(
            kit.glyph(
                (px(20), top + px(26), px(100), top + px(106)),
                "back",
                ctx.pop,
                desc="返回",
                fg=(255, 255, 255),
            )
        )
        return root
