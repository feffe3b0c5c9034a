"""System settings on com.android.settings: WLAN toggle, 深色模式 toggle and a brightness slider.

The toggles write ``phone.settings`` (the same store `settings put` uses), so ``state.settings_changed`` records
them either way and every app re-renders dark when dark mode is on.
"""

from __future__ import annotations

from mobile_agent.sim.world import kit
from mobile_agent.sim.world.base import Ctx, SimApp
from mobile_agent.sim.world.node import FRAME, LINEAR, Node, Style

ROWS = [
    ("WLAN", "wlan"),
    ("蓝牙", "bluetooth"),
    ("移动网络", None),
    ("更多连接", None),
    ("显示与亮度", "display"),
    ("声音与振动", None),
    ("通知与状态栏", None),
    ("应用设置", None),
    ("电池", None),
    ("隐私保护", None),
    ("关于手机", None),
]
NETWORKS = ["SimNet-5G", "ChinaNet-8A2F", "TP-LINK_88", "CMCC-Home"]
BLUE = (22, 119, 255)
WIFI = ("global", "wifi_on")
BLUETOOTH = ("global", "bluetooth_on")
NIGHT = ("secure", "ui_night_mode")
BRIGHTNESS = ("system", "screen_brightness")
AUTO_BRIGHTNESS = ("system", "screen_brightness_mode")


class Settings(SimApp):
    package = "com.android.settings"
    label = "设置"
    icon_color = (96, 125, 139)
    activities = {
        "home": "com.android.settings.Settings",
        "wlan": "com.android.settings.Settings$WifiSettingsActivity",
        "bluetooth": "com.android.settings.Settings$BluetoothSettingsActivity",
        "display": "com.android.settings.Settings$DisplaySettingsActivity",
    }

    def _flip(self, ctx: Ctx, key: tuple[str, str], on: str = "1", off: str = "0") -> None:
        settings = ctx.phone.settings
        settings[key] = off if settings.get(key) == on else on

    def _row(
        self,
        ctx: Ctx,
        y: int,
        title: str,
        *,
        value: str = "",
        on_click=None,
        right: Node | None = None,
        height: int = 0,
    ) -> Node:
        W, px = ctx.W, ctx.px
        h = height or px(160)
        row = kit.box((0, y, W, y + h), bg=ctx.pal.surface, cls=LINEAR, on_click=on_click)
        row.add(
            kit.text((px(50), y, W - px(360), y + h), title, px(46), ctx.pal.text, rid="android:id/title")
        )
        if value:
            row.add(
                kit.text(
                    (W - px(420), y, W - px(100), y + h),
                    value,
                    px(38),
                    ctx.pal.subtext,
                    align="right",
                    rid="android:id/summary",
                )
            )
        if right is not None:
            row.add(right)
        elif on_click is not None:
            row.add(
                kit.glyph(
                    (W - px(90), y + h // 2 - px(25), W - px(40), y + h // 2 + px(25)),
                    "chevron",
                    fg=ctx.pal.subtext,
                )
            )
        return row

    def screen_home(self, ctx: Ctx) -> Node:
        W, px, top = ctx.W, ctx.px, ctx.top
        root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=ctx.pal.bg))
        root.add(
            kit.text(
                (px(50), top + px(40), W, top + px(180)),
                "设置",
                px(80),
                ctx.pal.text,
                bold=True,
                rid="com.android.settings:id/homepage_title",
            )
        )
        search = kit.box(
            (px(40), top + px(200), W - px(40), top + px(310)),
            bg=ctx.pal.surface,
            radius=px(55),
            rid="com.android.settings:id/search_action_bar",
            on_click=lambda: ctx.toast("搜索设置项"),
        )
        search.add(
            kit.text(
                (px(130), top + px(200), W - px(60), top + px(310)), "搜索设置项", px(40), ctx.pal.subtext
            )
        )
        root.add(search)
        values = {
            "WLAN": "SimNet-5G" if ctx.phone.settings.wifi_on else "已关闭",
            "蓝牙": "已开启" if ctx.phone.settings.get(BLUETOOTH) == "1" else "已关闭",
        }

        def row(i: int, b: tuple[int, int, int, int]) -> Node:
            title, screen = ROWS[i]
            action = (
                (lambda screen=screen: ctx.push(screen)) if screen else (lambda title=title: ctx.toast(title))
            )
            return self._row(ctx, b[1], title, value=values.get(title, ""), on_click=action)

        area = (0, top + px(340), W, ctx.bottom)
        root.add(
            kit.scroll_list(
                ctx,
                "rows",
                area,
                [px(160)] * len(ROWS),
                row,
                rid="com.android.settings:id/recycler_view",
                bg=ctx.pal.surface,
            )
        )
        return root

    def screen_wlan(self, ctx: Ctx) -> Node:
        W, px, top = ctx.W, ctx.px, ctx.top
        on = ctx.phone.settings.wifi_on
        root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=ctx.pal.bg))
        root.add(kit.top_bar(ctx, "WLAN"))
        y = top + px(160)
        toggle = kit.switch(
            (W - px(200), y + px(40), W - px(50), y + px(120)),
            on,
            lambda: self._flip(ctx, WIFI),
            rid="android:id/switch_widget",
        )
        root.add(self._row(ctx, y, "WLAN", right=toggle, on_click=lambda: self._flip(ctx, WIFI)))
        if on:
            root.add(
                kit.text((px(50), y + px(190), W, y + px(260)), "可用 WLAN 列表", px(36), ctx.pal.subtext)
            )
            for i, name in enumerate(NETWORKS):
                ry = y + px(270) + i * px(160)
                root.add(
                    self._row(
                        ctx,
                        ry,
                        name,
                        value="已连接" if i == 0 else "加密",
                        on_click=lambda name=name: ctx.toast(f"连接 {name}"),
                    )
                )
        else:
            root.add(
                kit.text(
                    (px(50), y + px(200), W - px(50), y + px(300)),
                    "开启 WLAN 后可查看可用网络",
                    px(38),
                    ctx.pal.subtext,
                )
            )
        return root

    def screen_bluetooth(self, ctx: Ctx) -> Node:
        W, px, top = ctx.W, ctx.px, ctx.top
        on = ctx.phone.settings.get(BLUETOOTH) == "1"
        root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=ctx.pal.bg))
        root.add(kit.top_bar(ctx, "蓝牙"))
        y = top + px(160)
        toggle = kit.switch(
            (W - px(200), y + px(40), W - px(50), y + px(120)),
            on,
            lambda: self._flip(ctx, BLUETOOTH),
            rid="android:id/switch_widget",
        )
        root.add(self._row(ctx, y, "蓝牙", right=toggle, on_click=lambda: self._flip(ctx, BLUETOOTH)))
        return root

    def screen_display(self, ctx: Ctx) -> Node:
        W, px, top = ctx.W, ctx.px, ctx.top
        settings = ctx.phone.settings
        root = Node(FRAME, (0, top, W, ctx.bottom), style=Style(bg=ctx.pal.bg))
        root.add(kit.top_bar(ctx, "显示与亮度"))
        y = top + px(160)
        dark = ctx.phone.settings.dark_mode
        toggle = kit.switch(
            (W - px(200), y + px(40), W - px(50), y + px(120)),
            dark,
            lambda: self._flip(ctx, NIGHT, on="2", off="1"),
            rid="android:id/switch_widget",
            desc="深色模式",
        )
        root.add(
            self._row(
                ctx, y, "深色模式", right=toggle, on_click=lambda: self._flip(ctx, NIGHT, on="2", off="1")
            )
        )
        y += px(200)
        raw = settings.get(BRIGHTNESS, "128")
        percent = round(int(raw) * 100 / 255) if raw.isdigit() else 50
        panel = kit.box((0, y, W, y + px(260)), bg=ctx.pal.surface)
        panel.add(
            kit.text(
                (px(50), y + px(10), W - px(50), y + px(100)),
                f"亮度  {percent}%",
                px(46),
                ctx.pal.text,
                rid="android:id/title",
            )
        )

        def set_brightness(value: int) -> None:
            settings[BRIGHTNESS] = str(round(value * 255 / 100))

        panel.add(
            kit.seekbar(
                (px(80), y + px(140), W - px(80), y + px(220)),
                percent,
                set_brightness,
                rid="com.android.settings:id/seekbar",
                desc="亮度",
            )
        )
        root.add(panel)
        y += px(280)
        auto = settings.get(AUTO_BRIGHTNESS) == "1"
        auto_toggle = kit.switch(
            (W - px(200), y + px(40), W - px(50), y + px(120)),
            auto,
            lambda: self._flip(ctx, AUTO_BRIGHTNESS),
            rid="android:id/switch_widget",
            desc="自动调节",
        )
        root.add(
            self._row(
                ctx, y, "自动调节", right=auto_toggle, on_click=lambda: self._flip(ctx, AUTO_BRIGHTNESS)
            )
        )
        for i, (title, value) in enumerate(
            [("字体大小", "标准"), ("屏幕刷新率", "120Hz"), ("护眼模式", "已关闭")]
        ):
            root.add(
                self._row(
                    ctx,
                    y + px(180) + i * px(162),
                    title,
                    value=value,
                    on_click=lambda title=title: ctx.toast(title),
                )
            )
        return root
