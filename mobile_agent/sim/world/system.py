"""System UI screens that belong to no app: screen off, the lock screen and the recent-apps overview."""

from __future__ import annotations

from mobile_agent.sim.world import kit
from mobile_agent.sim.world.base import Ctx
from mobile_agent.sim.world.node import FRAME, Node, Style

WHITE = (255, 255, 255)


def screen_off(ctx: Ctx) -> Node:
    return Node(FRAME, (0, 0, ctx.W, ctx.H), style=Style(bg=(0, 0, 0)))


def lockscreen(ctx: Ctx) -> Node:
    W, H, px = ctx.W, ctx.H, ctx.px

    def unlock(x1: int, y1: int, x2: int, y2: int) -> None:
        if y1 - y2 > H // 5:
            ctx.phone.unlock()

    root = Node(
        FRAME,
        (0, 0, W, H),
        rid="com.android.systemui:id/notification_panel",
        style=Style(image="wallpaper:lock"),
        on_drag=unlock,
    )
    root.add(
        kit.text(
            (0, px(400), W, px(640)),
            ctx.phone.config.clock,
            px(200),
            WHITE,
            align="center",
            rid="com.android.systemui:id/clock_view",
        )
    )
    root.add(kit.text((0, px(660), W, px(740)), "6月1日 星期六", px(46), WHITE, align="center"))
    root.add(
        kit.text(
            (0, H - px(300), W, H - px(220)),
            "上滑解锁",
            px(40),
            WHITE,
            align="center",
            rid="com.android.systemui:id/keyguard_indication_text",
        )
    )
    return root


def recents(ctx: Ctx) -> Node:
    W, H, px = ctx.W, ctx.H, ctx.px
    phone = ctx.phone
    tasks = phone.tasks
    root = Node(
        FRAME, (0, 0, W, H), rid="com.android.launcher3:id/overview_panel", style=Style(bg=(40, 40, 46))
    )
    apps = list(reversed(tasks.recents))
    if not apps:
        root.add(
            kit.text(
                (0, H // 2 - px(40), W, H // 2 + px(40)), "近期没有任何内容", px(44), WHITE, align="center"
            )
        )
    card_h = px(520)
    for i, pkg in enumerate(apps[:4]):
        top = ctx.top + px(60) + i * (card_h + px(40))

        def remove(x1: int, y1: int, x2: int, y2: int, pkg: str = pkg) -> None:
            if abs(x2 - x1) > W // 4 or y1 - y2 > card_h // 3:
                tasks.stop(pkg)
                phone.record("recents_remove", package=pkg)

        card = Node(
            FRAME,
            (px(80), top, W - px(80), top + card_h),
            rid="com.android.launcher3:id/snapshot",
            desc=phone.display_name(pkg),
            clickable=True,
            on_drag=remove,
            on_click=lambda pkg=pkg: tasks.launch_locked(pkg),
            style=Style(image=f"photo:recent-{pkg}", radius=px(30)),
        )
        card.add(
            kit.text(
                (px(100), top + px(20), W - px(100), top + px(90)),
                phone.display_name(pkg),
                px(40),
                WHITE,
                bold=True,
            )
        )
        root.add(card)

    def clear_all() -> None:
        for pkg in list(tasks.recents):
            tasks.stop(pkg)
        tasks.showing_recents = False
        tasks.go_home()

    root.add(
        kit.button(
            (W // 2 - px(160), H - px(260), W // 2 + px(160), H - px(150)),
            "全部清除",
            clear_all,
            size=px(40),
            bg=(70, 70, 78),
            radius=px(55),
            rid="com.android.launcher3:id/clear_all",
        )
    )
    return root
