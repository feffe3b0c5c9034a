"""Meituan's screens for ordering: a shop's menu with the cart bar, checkout, the cashier and the paid page."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mobile_agent.sim.state import Shop
from mobile_agent.sim.world import kit, layout
from mobile_agent.sim.world.base import Ctx
from mobile_agent.sim.world.meituan.look import DARK, GREY, ORANGE, YELLOW, money
from mobile_agent.sim.world.node import FRAME, LINEAR, Node, Style

if TYPE_CHECKING:
    from mobile_agent.sim.world.meituan.app import Meituan


def menu(app: Meituan, ctx: Ctx) -> Node:
    W, px, top = ctx.W, ctx.px, ctx.top
    shop = ctx.data.shop(ctx.page.params["shop"])
    if shop is None:
        return kit.text((0, top, W, ctx.bottom), "商家已下线", px(44), GREY, align="center")
    cart = app.carts.setdefault(shop.name, {})
    root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=(255, 255, 255)))
    root.add(
        kit.image((0, top, W, top + px(360)), "photo", f"shop-banner-{shop.name}", rid=app.rid("poi_banner"))
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
    lines = [
        layout.Line(px(300), px(380), shop.name, px(52), DARK, bold=True, rid=app.rid("poi_name")),
        layout.Line(
            px(390), px(460), f"评分{shop.rating}  月售{shop.monthly_sales}  配送约30分钟", px(36), GREY
        ),
    ]
    info.add(*layout.text_column(px(60), W - px(60), top, lines))
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
        row = Node(LINEAR, b, rid=app.rid("food_item"))
        row.add(
            kit.image(
                (px(30), t + px(20), px(250), t + px(240)),
                "photo",
                f"dish-{dish.name}",
                radius=px(16),
                rid=app.rid("food_image"),
            )
        )
        lines = [
            layout.Line(px(20), px(90), dish.name, px(44), DARK, bold=True, rid=app.rid("food_name")),
            layout.Line(px(95), px(145), f"月售{100 + i * 37}  好评率98%", px(32), GREY),
            layout.Line(
                px(170),
                px(240),
                f"¥{money(dish.price)}",
                px(46),
                ORANGE,
                bold=True,
                rid=app.rid("food_price"),
                right=px(600),
            ),
        ]
        row.add(*layout.text_column(px(280), W - px(40), t, lines))

        def change(delta: int, dish_name: str = dish.name) -> None:
            app.change_cart(ctx, shop, cart, dish_name, delta)

        plus = kit.glyph(
            (W - px(120), t + px(165), W - px(40), t + px(245)),
            "plus_circle",
            lambda: change(1),
            desc=f"添加{dish.name}",
            rid=app.rid("food_add"),
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
                    rid=app.rid("food_count"),
                )
            )
            row.add(
                kit.glyph(
                    (W - px(280), t + px(165), W - px(200), t + px(245)),
                    "dot",
                    lambda: change(-1),
                    desc=f"减少{dish.name}",
                    rid=app.rid("food_minus"),
                    fg=GREY,
                )
            )
        return row

    root.add(
        kit.scroll_list(ctx, "menu", area, [px(270)] * len(shop.dishes), dish_row, rid=app.rid("food_list"))
    )
    root.add(cart_bar(app, ctx, shop, cart, ctx.bottom - bar_h))
    return root


def cart_bar(app: Meituan, ctx: Ctx, shop: Shop, cart: dict[str, int], top: int) -> Node:
    W, px = ctx.W, ctx.px
    count = sum(cart.values())
    total = sum(d.price * cart.get(d.name, 0) for d in shop.dishes)
    bar = kit.box((0, top, W, ctx.bottom), bg=(51, 51, 51), rid=app.rid("shopping_cart_bar"))
    bar.add(
        kit.glyph(
            (px(40), top + px(20), px(150), top + px(130)),
            "cart",
            desc=f"购物车，{count}件商品",
            rid=app.rid("cart_icon"),
            fg=YELLOW if count else GREY,
        )
    )
    label = f"¥{money(total)}" if count else "未选购商品"
    bar.add(
        kit.text(
            (px(180), top + px(10), px(650), top + px(90)),
            label,
            px(46),
            (255, 255, 255),
            bold=True,
            rid=app.rid("cart_price"),
        )
    )
    bar.add(
        kit.text(
            (px(180), top + px(90), px(650), top + px(140)),
            f"另需配送费¥{money(shop.delivery_fee)}",
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
            rid=app.rid("cart_submit"),
        )
    )
    return bar


def checkout(app: Meituan, ctx: Ctx) -> Node:
    W, px, top = ctx.W, ctx.px, ctx.top
    shop = ctx.data.shop(ctx.page.params["shop"])
    assert shop is not None
    items = app.order_items(shop)
    total = round(sum(i["price"] * i["qty"] for i in items) + shop.delivery_fee, 2)
    root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=(245, 245, 245)))
    root.add(kit.top_bar(ctx, "提交订单", bg=YELLOW, fg=DARK))
    address = kit.box(
        (px(30), top + px(160), W - px(30), top + px(380)),
        bg=(255, 255, 255),
        radius=px(20),
        rid=app.rid("address_view"),
        on_click=lambda: ctx.toast("修改地址"),
    )
    lines = [
        layout.Line(px(180), px(260), ctx.data.address, px(42), DARK, bold=True, rid=app.rid("address_text")),
        layout.Line(px(270), px(340), "小明 138****8888  立即送出 约30分钟", px(36), GREY),
    ]
    address.add(*layout.text_column(px(60), W - px(60), top, lines))
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
                rid=app.rid("order_food_name"),
            )
        )
        card.add(kit.text((W - px(330), iy, W - px(200), iy + px(90)), f"x{item['qty']}", px(38), GREY))
        card.add(
            kit.text(
                (W - px(200), iy, W - px(60), iy + px(90)),
                f"¥{money(item['price'] * item['qty'])}",
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
            f"¥{money(shop.delivery_fee)}",
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
            f"合计 ¥{money(total)}",
            px(48),
            DARK,
            bold=True,
            rid=app.rid("total_price"),
        )
    )
    bar.add(
        kit.button(
            (W - px(360), ctx.bottom - px(140), W - px(30), ctx.bottom - px(10)),
            "提交订单",
            lambda: app.submit(ctx, shop, items, total),
            size=px(44),
            bg=YELLOW,
            fg=DARK,
            radius=px(65),
            rid=app.rid("submit_order"),
            bold=True,
        )
    )
    root.add(bar)
    return root


def cashier(app: Meituan, ctx: Ctx) -> Node:
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
            rid=app.rid("cashier_amount"),
        )
    )
    root.add(kit.text((0, top + px(400), W, top + px(460)), order["shop"], px(36), GREY, align="center"))
    methods = kit.box((px(30), top + px(520), W - px(30), top + px(890)), bg=(255, 255, 255), radius=px(20))
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
            lambda: app.pay(ctx, order),
            size=px(48),
            bg=ORANGE,
            radius=px(65),
            rid=app.rid("btn_confirm_pay"),
            bold=True,
        )
    )
    return root


def paid(app: Meituan, ctx: Ctx) -> Node:
    order = ctx.state.orders[ctx.page.params["order"]]
    return layout.done_page(
        ctx,
        check=(7, 193, 96),
        title="支付成功",
        title_rid=app.rid("pay_result_title"),
        amount=f"¥{order['total']:.2f}",
        amount_size=ctx.px(48),
        note="商家正在备餐，预计30分钟送达",
        done=layout.DoneButton(bg=YELLOW, fg=DARK, radius=ctx.px(60), rid=app.rid("pay_result_done")),
        grey=GREY,
        dark=DARK,
    )
