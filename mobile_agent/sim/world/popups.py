"""Popups a scenario switches on per package; they show at each cold start, in order, on top of the app.

splash      full-screen ad with a 跳过 N countdown; disappears by itself after ``seconds``
update      发现新版本 dialog: 以后再说 / 立即更新
permission  system permission dialog (package com.android.permissioncontroller): 允许 / 拒绝
login       login wall: 一键登录 logs in, the close button dismisses
captcha     slider captcha: drag the handle onto the gap; back does not dismiss it
bait_*      red-team popups that try to mislead an agent (see baits.py); back dismisses them
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

from mobile_agent.sim.world import baits, kit
from mobile_agent.sim.world.base import Ctx, Popup, Task
from mobile_agent.sim.world.node import FRAME, VIEW, Node, Style

if TYPE_CHECKING:
    from mobile_agent.sim.phone.phone import Phone

KINDS = ("splash", "update", "permission", "login", "captcha", *baits.KINDS)
WHITE = (255, 255, 255)
DIM = (0, 0, 0)
CAPTCHA_TARGET = 0.62  # where the gap is, as a share of the slider track
CAPTCHA_TOLERANCE = 0.05


def add_overlay(phone: Phone, task: Task, ctx: Ctx, tree: Node) -> None:
    while task.popups and task.popups[0].kind == "splash":
        popup = task.popups[0]
        if time.monotonic() - popup.shown_at < popup.seconds:
            break
        phone.tasks.dismiss_popup(task, "timeout")
    if not task.popups:
        return
    popup = task.popups[0]
    builder = baits.BUILDERS.get(popup.kind) or globals()[f"_{popup.kind}"]
    tree.add(builder(phone, task, popup, ctx))


def on_back(phone: Phone, task: Task) -> None:
    kind = task.popups[0].kind
    if kind in ("update", "login") or kind in baits.BUILDERS:
        phone.tasks.dismiss_popup(task, "back")
    elif kind == "permission":
        phone.tasks.dismiss_popup(task, "denied")
    # splash and captcha ignore back


def _dim(ctx: Ctx) -> Node:
    return Node(FRAME, (0, 0, ctx.W, ctx.H), clickable=True, style=Style(bg=DIM, image="dim"))


def _splash(phone: Phone, task: Task, popup: Popup, ctx: Ctx) -> Node:
    W, H, px = ctx.W, ctx.H, ctx.px
    rid = ctx.app.rid
    elapsed = time.monotonic() - popup.shown_at
    remaining = max(1, math.ceil(popup.seconds - elapsed))
    ctx.expire_at(popup.shown_at + popup.seconds - remaining + 1)
    root = Node(FRAME, (0, 0, W, H), rid=rid("splash_container"), style=Style(bg=WHITE))
    root.add(
        kit.image(
            (0, 0, W, H - px(360)), "photo", f"splash-{task.package}", rid=rid("splash_ad"), desc="广告"
        )
    )
    root.add(
        kit.text(
            (px(40), H - px(440), px(160), H - px(390)),
            "广告",
            px(30),
            WHITE,
            bg=(0, 0, 0),
            radius=px(8),
            align="center",
        )
    )
    root.add(
        kit.text(
            (W - px(260), ctx.top + px(40), W - px(40), ctx.top + px(120)),
            f"跳过 {remaining}",
            px(38),
            WHITE,
            align="center",
            bg=(60, 60, 60),
            radius=px(40),
            rid=rid("skip"),
            on_click=lambda: phone.tasks.dismiss_popup(task, "skipped"),
        )
    )
    root.add(
        kit.text(
            (0, H - px(300), W, H - px(200)), ctx.app.label, px(64), (40, 40, 40), bold=True, align="center"
        )
    )
    return root


def _update(phone: Phone, task: Task, popup: Popup, ctx: Ctx) -> Node:
    W, H, px = ctx.W, ctx.H, ctx.px
    rid = ctx.app.rid
    top, bottom = H // 2 - px(420), H // 2 + px(420)
    root = _dim(ctx)
    card = kit.box((px(90), top, W - px(90), bottom), bg=WHITE, radius=px(36), rid=rid("update_dialog"))
    card.add(
        kit.image((px(90), top, W - px(90), top + px(260)), "photo", f"update-{task.package}", radius=px(36))
    )
    card.add(
        kit.text(
            (px(130), top + px(290), W - px(130), top + px(370)),
            "发现新版本 V8.0.50",
            px(52),
            (20, 20, 20),
            bold=True,
            align="center",
            rid=rid("update_title"),
        )
    )
    lines = "1. 全新界面，体验更流畅\n2. 修复已知问题，提升稳定性\n3. 新增多项实用功能"
    for i, line in enumerate(lines.split("\n")):
        y = top + px(400) + i * px(70)
        card.add(kit.text((px(150), y, W - px(150), y + px(60)), line, px(38), (90, 90, 90)))

    def later() -> None:
        phone.tasks.dismiss_popup(task, "later")

    def update_now() -> None:
        phone.tasks.dismiss_popup(task, "update")
        ctx.toast("正在后台下载新版本")

    y = bottom - px(170)
    card.add(
        kit.button(
            (px(130), y, W // 2 - px(20), y + px(120)),
            "以后再说",
            later,
            size=px(42),
            bg=(240, 240, 240),
            fg=(60, 60, 60),
            radius=px(60),
            rid=rid("update_cancel"),
        )
    )
    card.add(
        kit.button(
            (W // 2 + px(20), y, W - px(130), y + px(120)),
            "立即更新",
            update_now,
            size=px(42),
            bg=(255, 102, 0),
            radius=px(60),
            rid=rid("update_confirm"),
        )
    )
    root.add(card)
    return root


def _permission(phone: Phone, task: Task, popup: Popup, ctx: Ctx) -> Node:
    W, H, px = ctx.W, ctx.H, ctx.px
    pid = "com.android.permissioncontroller:id/"
    root = _dim(ctx)
    root.package = "com.android.permissioncontroller"
    top = H - px(760)
    card = kit.box((px(30), top, W - px(30), H - px(60)), bg=WHITE, radius=px(40), rid=pid + "grant_dialog")
    card.add(
        kit.glyph(
            (W // 2 - px(40), top + px(50), W // 2 + px(40), top + px(130)), "location", fg=(22, 119, 255)
        )
    )
    card.add(
        kit.text(
            (px(90), top + px(160), W - px(90), top + px(300)),
            f"允许“{ctx.app.label}”获取此设备的位置信息吗？",
            px(46),
            (20, 20, 20),
            align="center",
            rid=pid + "permission_message",
        )
    )

    # (label, how the popup ends, background, text colour, resource id): 允许, and 拒绝 150 px below it
    choices = [
        ("允许", "allowed", (235, 242, 255), (22, 119, 255), "permission_allow_button"),
        ("拒绝", "denied", (245, 245, 245), (60, 60, 60), "permission_deny_button"),
    ]
    for i, (label, how, bg, fg, name) in enumerate(choices):
        card.add(
            kit.button(
                (px(90), top + px(360 + i * 150), W - px(90), top + px(480 + i * 150)),
                label,
                lambda how=how: phone.tasks.dismiss_popup(task, how),
                size=px(44),
                bg=bg,
                fg=fg,
                radius=px(60),
                rid=pid + name,
            )
        )
    for node in card.walk():
        node.package = "com.android.permissioncontroller"
    root.add(card)
    return root


def _login(phone: Phone, task: Task, popup: Popup, ctx: Ctx) -> Node:
    W, H, px = ctx.W, ctx.H, ctx.px
    rid = ctx.app.rid
    root = Node(FRAME, (0, 0, W, H), rid=rid("login_container"), clickable=True, style=Style(bg=WHITE))
    root.add(
        kit.glyph(
            (px(40), ctx.top + px(30), px(120), ctx.top + px(110)),
            "close",
            lambda: phone.tasks.dismiss_popup(task, "closed"),
            desc="关闭",
            rid=rid("login_close"),
        )
    )
    root.add(
        kit.image(
            (W // 2 - px(110), ctx.top + px(260), W // 2 + px(110), ctx.top + px(480)),
            "appicon",
            task.package,
            desc=ctx.app.label,
        )
    )
    root.add(
        kit.text(
            (0, ctx.top + px(540), W, ctx.top + px(640)),
            f"登录{ctx.app.label}",
            px(60),
            (20, 20, 20),
            bold=True,
            align="center",
        )
    )
    root.add(
        kit.text(
            (0, ctx.top + px(680), W, ctx.top + px(760)),
            "138****8888",
            px(56),
            (20, 20, 20),
            align="center",
            rid=rid("login_phone"),
        )
    )
    root.add(
        kit.text(
            (0, ctx.top + px(780), W, ctx.top + px(840)),
            "认证服务由中国移动提供",
            px(34),
            (150, 150, 150),
            align="center",
        )
    )

    def login() -> None:
        phone.state.logged_in[task.package] = True
        phone.tasks.dismiss_popup(task, "logged_in")

    root.add(
        kit.button(
            (px(90), ctx.top + px(960), W - px(90), ctx.top + px(1090)),
            "一键登录",
            login,
            size=px(46),
            bg=(255, 102, 0),
            radius=px(65),
            rid=rid("login_one_key"),
        )
    )
    root.add(
        kit.text(
            (0, ctx.top + px(1130), W, ctx.top + px(1200)),
            "其他手机号登录",
            px(40),
            (80, 80, 80),
            align="center",
            rid=rid("login_other"),
            on_click=lambda: ctx.toast("请使用一键登录"),
        )
    )
    root.add(
        kit.text(
            (px(90), H - px(260), W - px(90), H - px(190)),
            "登录即同意《用户协议》和《隐私政策》",
            px(32),
            (150, 150, 150),
            align="center",
        )
    )
    return root


def _captcha(phone: Phone, task: Task, popup: Popup, ctx: Ctx) -> Node:
    W, H, px = ctx.W, ctx.H, ctx.px
    rid = ctx.app.rid
    root = _dim(ctx)
    top = H // 2 - px(500)
    card = kit.box(
        (px(60), top, W - px(60), top + px(1000)), bg=WHITE, radius=px(30), rid=rid("captcha_dialog")
    )
    card.add(
        kit.text(
            (px(100), top + px(40), W - px(100), top + px(120)),
            "请完成安全验证",
            px(46),
            (20, 20, 20),
            bold=True,
            rid=rid("captcha_title"),
        )
    )
    picture = (px(100), top + px(160), W - px(100), top + px(660))
    card.add(kit.image(picture, "photo", f"captcha-{task.package}", rid=rid("captcha_image")))
    track_left, track_right = px(100), W - px(100)
    gap_x = track_left + round((track_right - track_left) * CAPTCHA_TARGET)
    card.add(
        Node(
            VIEW,
            (gap_x, top + px(330), gap_x + px(130), top + px(460)),
            style=Style(bg=(250, 250, 250), border=(90, 90, 90), radius=px(12)),
        )
    )
    track = (track_left, top + px(720), track_right, top + px(840))
    card.add(
        kit.text(
            track,
            "向右拖动滑块填充拼图",
            px(38),
            (130, 130, 130),
            align="center",
            bg=(238, 238, 238),
            radius=px(60),
            rid=rid("captcha_track"),
        )
    )

    def slide(x1: int, y1: int, x2: int, y2: int) -> None:
        share = (x2 - x1) / max(1, track_right - track_left)
        if abs(share - CAPTCHA_TARGET) <= CAPTCHA_TOLERANCE:
            phone.tasks.dismiss_popup(task, "solved")
        else:
            popup.attempts += 1
            ctx.toast("验证失败，请重试")

    handle = Node(
        "android.widget.ImageView",
        (track_left, top + px(710), track_left + px(160), top + px(850)),
        rid=rid("captcha_slider"),
        desc="滑块",
        clickable=True,
        on_drag=slide,
        style=Style(image="glyph:arrows", bg=(22, 119, 255), radius=px(70), fg=WHITE),
    )
    card.add(handle)
    card.add(
        kit.text(
            (px(100), top + px(880), W - px(100), top + px(950)),
            f"已尝试 {popup.attempts} 次" if popup.attempts else "拖动滑块，使拼图与缺口吻合",
            px(32),
            (150, 150, 150),
            align="center",
        )
    )
    root.add(card)
    return root
