"""Payments on com.eg.android.AlipayGphone: 转账 -> pick a contact -> amount -> 确认转账 records an unconfirmed
transfer and opens the payment password screen, which is FLAG_SECURE (screenshots come back black)."""

from __future__ import annotations

import hashlib

from mobile_agent.sim.world import kit, layout
from mobile_agent.sim.world.base import Ctx, SimApp
from mobile_agent.sim.world.node import FRAME, Node, Style
from mobile_agent.sim.world.traps import SCREENS

BLUE = kit.ALIPAY_BLUE
DARK = (34, 34, 34)
GREY = (153, 153, 153)
WHITE = (255, 255, 255)
TOP_ICONS = ["扫一扫", "收付款", "出行", "卡包"]
GRID = ["转账", "信用卡还款", "充值中心", "余额宝", "花呗", "蚂蚁森林", "饿了么", "更多"]
KEYPAD = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "", "0", "删除"]


def _amount(text: str) -> float | None:
    try:
        value = round(float(text), 2)
    except ValueError:
        return None
    return value if value > 0 else None


class Alipay(SimApp):
    package = "com.eg.android.AlipayGphone"
    shared_screens = SCREENS  # the red-team trap screens (sim/world/traps.py)
    label = "支付宝"
    icon_color = BLUE
    activities = {
        "home": "com.eg.android.AlipayGphone.AlipayLogin",
        "transfer": "com.alipay.mobile.transferapp.ui.TransferHomeActivity_",
        "amount": "com.alipay.mobile.transferapp.ui.TransferToAccountInputActivity_",
        "password": "com.alipay.android.app.flybird.ui.window.FlyBirdWindowActivity",
        "success": "com.alipay.mobile.transferapp.ui.TransferSuccessActivity_",
    }

    def screen_home(self, ctx: Ctx) -> Node:
        W, px, top = ctx.W, ctx.px, ctx.top
        root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=(245, 245, 245)))
        header = kit.box((0, top, W, top + px(480)), bg=BLUE)
        search = kit.box(
            (px(30), top + px(30), W - px(200), top + px(130)),
            bg=WHITE,
            radius=px(50),
            rid=self.rid("home_title_search_button"),
            on_click=lambda: ctx.toast("搜索"),
        )
        search.add(kit.text((px(100), top + px(30), W - px(220), top + px(130)), "搜索 转账", px(40), GREY))
        header.add(search)
        header.add(
            kit.glyph(
                (W - px(170), top + px(40), W - px(90), top + px(120)),
                "plus_circle",
                lambda: ctx.toast("更多"),
                desc="更多",
                fg=WHITE,
            )
        )
        cell = W // 4
        for i, name in enumerate(TOP_ICONS):
            item = kit.box(
                (i * cell, top + px(180), (i + 1) * cell, top + px(450)),
                rid=self.rid("home_app_item"),
                on_click=lambda name=name: ctx.toast(name),
            )
            item.add(
                kit.glyph(
                    (
                        i * cell + cell // 2 - px(55),
                        top + px(200),
                        i * cell + cell // 2 + px(55),
                        top + px(310),
                    ),
                    "scan" if i == 0 else "dot",
                    fg=WHITE,
                )
            )
            item.add(
                kit.text(
                    (i * cell, top + px(330), (i + 1) * cell, top + px(400)),
                    name,
                    px(40),
                    WHITE,
                    align="center",
                )
            )
            header.add(item)
        root.add(header)
        grid = kit.box((0, top + px(480), W, top + px(980)), bg=WHITE, rid=self.rid("home_grid"))
        for i, name in enumerate(GRID):
            row, col = divmod(i, 4)
            y = top + px(520) + row * px(220)
            action = (lambda: ctx.push("transfer")) if name == "转账" else (lambda name=name: ctx.toast(name))
            grid.add(
                kit.icon_cell(
                    (col * cell, y, (col + 1) * cell, y + px(210)),
                    name,
                    icon=(px(55), px(110)),
                    label=(px(120), px(180)),
                    size=px(36),
                    fg=DARK,
                    rid=self.rid("app_text"),
                    on_click=action,
                )
            )
        root.add(grid)
        tabs = kit.tab_bar(
            ctx,
            ["首页", "理财", "视频", "消息", "我的"],
            0,
            lambda i: None,
            rid=self.rid("tab_description"),
            accent=BLUE,
            icons=["home", "dot", "dot", "chat", "user"],
        )
        area = (0, top + px(1000), W, tabs.bounds[1])

        def feed(i: int, b: tuple[int, int, int, int]) -> Node:
            left, t, right, bottom = b
            card = kit.box(
                (px(30), t + px(10), W - px(30), bottom - px(10)),
                bg=WHITE,
                radius=px(20),
                on_click=lambda: None,
            )
            card.add(
                kit.image(
                    (px(50), t + px(30), px(380), bottom - px(30)), "photo", f"alipay-feed-{i}", radius=px(14)
                )
            )
            card.add(
                kit.text(
                    (px(410), t + px(40), W - px(60), t + px(110)),
                    ["余额宝收益日报", "蚂蚁森林：能量已成熟", "本月账单已出", "出行优惠券到账"][i % 4],
                    px(42),
                    DARK,
                    bold=True,
                )
            )
            card.add(kit.text((px(410), t + px(120), W - px(60), t + px(180)), "点击查看详情", px(34), GREY))
            return card

        root.add(kit.scroll_list(ctx, "feed", area, [px(330)] * 6, feed, rid=self.rid("home_feed")))
        root.add(tabs)
        return root

    def screen_transfer(self, ctx: Ctx) -> Node:
        W, px, top = ctx.W, ctx.px, ctx.top
        root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=(245, 245, 245)))
        root.add(kit.top_bar(ctx, "转账", bg=WHITE, fg=DARK))
        for i, (name, sub) in enumerate(
            [("转到支付宝", "转给支付宝好友"), ("转到银行卡", "支持转到本人及他人银行卡")]
        ):
            y = top + px(160) + i * px(180)
            row = kit.box(
                (0, y, W, y + px(170)),
                bg=WHITE,
                rid=self.rid("transfer_entry"),
                on_click=lambda name=name: ctx.toast(name),
            )
            row.add(kit.image((px(40), y + px(35), px(140), y + px(135)), "icon", name))
            row.add(kit.text((px(180), y + px(25), W - px(80), y + px(95)), name, px(46), DARK))
            row.add(kit.text((px(180), y + px(95), W - px(80), y + px(150)), sub, px(34), GREY))
            root.add(row)
        y = top + px(540)
        root.add(kit.text((px(40), y, W, y + px(80)), "最近", px(40), GREY))
        for i, name in enumerate(ctx.data.alipay_contacts):
            ry = y + px(90) + i * px(170)
            row = kit.box(
                (0, ry, W, ry + px(170)),
                bg=WHITE,
                rid=self.rid("recent_contact"),
                on_click=lambda name=name: ctx.push("amount", to=name, focus="amount"),
            )
            row.add(
                kit.image(
                    (px(40), ry + px(25), px(160), ry + px(145)), "avatar", f"alipay-{name}", radius=px(60)
                )
            )
            row.add(
                kit.text(
                    (px(200), ry + px(20), W - px(80), ry + px(95)),
                    name,
                    px(46),
                    DARK,
                    rid=self.rid("contact_name"),
                )
            )
            row.add(kit.text((px(200), ry + px(95), W - px(80), ry + px(150)), _account(name), px(34), GREY))
            root.add(row)
        return root

    def screen_amount(self, ctx: Ctx) -> Node:
        W, px, top = ctx.W, ctx.px, ctx.top
        to = ctx.page.params["to"]
        root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=(245, 245, 245)))
        root.add(kit.top_bar(ctx, "转账", bg=WHITE, fg=DARK))
        payee = kit.box((0, top + px(140), W, top + px(340)), bg=WHITE)
        payee.add(
            kit.image(
                (px(40), top + px(170), px(180), top + px(310)), "avatar", f"alipay-{to}", radius=px(70)
            )
        )
        payee.add(
            kit.text(
                (px(220), top + px(170), W - px(40), top + px(240)),
                to,
                px(48),
                DARK,
                bold=True,
                rid=self.rid("payee_name"),
            )
        )
        payee.add(kit.text((px(220), top + px(245), W - px(40), top + px(305)), _account(to), px(36), GREY))
        root.add(payee)
        card = kit.box((0, top + px(360), W, top + px(760)), bg=WHITE)
        card.add(kit.text((px(40), top + px(380), W, top + px(450)), "转账金额", px(40), DARK))
        card.add(kit.text((px(40), top + px(470), px(110), top + px(600)), "¥", px(80), DARK, bold=True))
        card.add(
            kit.field(
                ctx,
                "amount",
                (px(120), top + px(460), W - px(40), top + px(610)),
                "0.00",
                rid=self.rid("amount_input"),
                size=px(80),
            )
        )
        card.add(
            kit.text(
                (px(40), top + px(640), W - px(40), top + px(720)),
                "添加转账说明",
                px(38),
                (87, 107, 149),
                rid=self.rid("remark"),
                on_click=lambda: ctx.toast("添加转账说明"),
            )
        )
        root.add(card)
        amount = _amount(ctx.field("amount"))
        root.add(
            kit.button(
                (px(40), top + px(820), W - px(40), top + px(950)),
                "确认转账",
                lambda: self._confirm(ctx, to),
                size=px(48),
                bg=BLUE,
                radius=px(20),
                rid=self.rid("confirm_button"),
                enabled=amount is not None,
            )
        )
        root.add(
            kit.text(
                (0, top + px(980), W, top + px(1040)),
                f"账户余额 ¥{ctx.data.balance:.2f}",
                px(34),
                GREY,
                align="center",
            )
        )
        return root

    def _confirm(self, ctx: Ctx, to: str) -> None:
        amount = _amount(ctx.field("amount"))
        if amount is None:
            return
        if amount > ctx.data.balance:
            ctx.toast("余额不足")
            return
        ctx.state.transfers.append({"app": self.package, "to": to, "amount": amount, "confirmed": False})
        ctx.record("transfer_requested", to=to, amount=amount)
        ctx.push("password", transfer=len(ctx.state.transfers) - 1, pin="")

    def screen_password(self, ctx: Ctx) -> Node:
        W, px, H = ctx.W, ctx.px, ctx.H
        ctx.secure = True  # FLAG_SECURE: screenshots of this window are black
        transfer = ctx.state.transfers[ctx.page.params["transfer"]]
        pin = ctx.page.params.get("pin", "")
        root = Node(FRAME, (0, ctx.top, W, ctx.bottom), style=Style(bg=(0, 0, 0), image="dim"))
        top = H - px(1500)
        sheet = kit.box((0, top, W, ctx.bottom), bg=WHITE, radius=px(30), rid=self.rid("flybird_container"))
        sheet.add(kit.glyph((px(30), top + px(30), px(110), top + px(110)), "close", ctx.pop, desc="关闭"))
        sheet.add(
            kit.text(
                (0, top + px(30), W, top + px(110)),
                "请输入支付密码",
                px(48),
                DARK,
                bold=True,
                align="center",
                rid=self.rid("pwd_title"),
            )
        )
        sheet.add(
            kit.text(
                (0, top + px(140), W, top + px(260)),
                f"¥{transfer['amount']:.2f}",
                px(80),
                DARK,
                bold=True,
                align="center",
            )
        )
        sheet.add(
            kit.text(
                (0, top + px(260), W, top + px(320)), f"向{transfer['to']}转账", px(36), GREY, align="center"
            )
        )
        box_w = px(140)
        left = (W - box_w * 6) // 2
        for i in range(6):
            sheet.add(
                kit.text(
                    (left + i * box_w, top + px(380), left + (i + 1) * box_w, top + px(520)),
                    "●" if i < len(pin) else "",
                    px(40),
                    DARK,
                    align="center",
                    rid=self.rid("pwd_box"),
                )
            )
        sheet.add(
            kit.text(
                (0, top + px(540), W - px(40), top + px(600)),
                "忘记密码？",
                px(36),
                (87, 107, 149),
                align="right",
                on_click=lambda: ctx.toast("找回密码"),
            )
        )
        key_top = ctx.bottom - px(4 * 160)
        key_w = W // 3
        for i, label in enumerate(KEYPAD):
            row, col = divmod(i, 3)
            bounds = (col * key_w, key_top + row * px(160), (col + 1) * key_w, key_top + (row + 1) * px(160))
            if not label:
                continue
            sheet.add(
                kit.button(
                    bounds,
                    label,
                    lambda label=label: self._key(ctx, label),
                    size=px(56),
                    bg=(245, 245, 245) if label != "删除" else (225, 225, 225),
                    fg=DARK,
                    radius=0,
                    rid=self.rid(f"key_{i}"),
                )
            )
        root.add(sheet)
        return root

    def _key(self, ctx: Ctx, label: str) -> None:
        pin = ctx.page.params.get("pin", "")
        pin = pin[:-1] if label == "删除" else (pin + label)[:6]
        ctx.page.params["pin"] = pin
        ctx.changed()
        if len(pin) == 6:
            transfer = ctx.state.transfers[ctx.page.params["transfer"]]
            transfer["confirmed"] = True
            ctx.data.balance = round(ctx.data.balance - transfer["amount"], 2)
            ctx.record("transfer_confirmed", to=transfer["to"], amount=transfer["amount"])
            ctx.replace("success", transfer=ctx.page.params["transfer"])

    def screen_success(self, ctx: Ctx) -> Node:
        transfer = ctx.state.transfers[ctx.page.params["transfer"]]
        return layout.done_page(
            ctx,
            check=BLUE,
            title="转账成功",
            title_rid=self.rid("success_title"),
            amount=f"¥{transfer['amount']:.2f}",
            amount_size=ctx.px(52),
            note=f"收款人：{transfer['to']}",
            done=layout.DoneButton(bg=BLUE, radius=ctx.px(20), rid=self.rid("success_done")),
            grey=GREY,
            dark=DARK,
        )


def _account(name: str) -> str:
    """A masked account the way the app shows it, stable per name."""
    digits = int(hashlib.md5(name.encode()).hexdigest()[:8], 16)
    return f"1{digits % 100:02d}******{digits % 10000:04d}"
