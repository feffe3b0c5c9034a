"""The home screen: a wallpaper, a clock widget, pages of app icons (4 x 5) and a dock. Tapping an icon launches."""

from __future__ import annotations

from mobile_agent.sim.world import kit
from mobile_agent.sim.world.base import Ctx, SimApp
from mobile_agent.sim.world.node import FRAME, TEXT, Node, Style

DOCK = ["com.android.phone", "com.android.contacts", "com.android.chrome", "com.android.camera2"]
COLUMNS, ROWS = 4, 5
WHITE = (255, 255, 255)
LAUNCHER = "com.android.launcher3"


class Launcher(SimApp):
    package = LAUNCHER
    label = "桌面"
    root_screen = "home"
    activities = {"home": "com.android.launcher3.uioverrides.QuickstepLauncher"}

    def grid_packages(self, ctx: Ctx) -> list[str]:
        return [p for p in ctx.phone.packages.launchable() if p not in DOCK]

    def screen_home(self, ctx: Ctx) -> Node:
        W, H, px = ctx.W, ctx.H, ctx.px
        page_index = int(ctx.page.params.get("page", 0))
        packages = self.grid_packages(ctx)
        per_page = COLUMNS * ROWS
        pages = max(1, -(-len(packages) // per_page))
        page_index = max(0, min(page_index, pages - 1))
        root = Node(FRAME, (0, 0, W, H), style=Style(image="wallpaper:home"))  # drawn behind the status bar

        def flip(x1: int, y1: int, x2: int, y2: int) -> None:
            if abs(x2 - x1) < abs(y2 - y1):
                return
            target = page_index + (1 if x2 < x1 else -1)
            if 0 <= target < pages:
                ctx.page.params["page"] = target
                ctx.changed()

        workspace = Node(
            "android.widget.ScrollView",
            (0, ctx.top, W, H - px(420)),
            rid="com.android.launcher3:id/workspace",
            scrollable=pages > 1,
            on_drag=flip,
        )
        widget_top = ctx.top + px(60)
        workspace.add(
            kit.text(
                (px(60), widget_top, W - px(60), widget_top + px(200)),
                ctx.phone.config.clock,
                px(150),
                WHITE,
                rid="com.android.launcher3:id/clock",
            )
        )
        workspace.add(
            kit.text(
                (px(66), widget_top + px(200), W - px(60), widget_top + px(270)),
                "6月1日 星期六  晴 26°C",
                px(40),
                WHITE,
            )
        )
        grid_top = widget_top + px(360)
        cell_w = W // COLUMNS
        cell_h = px(280)
        for i, pkg in enumerate(packages[page_index * per_page : (page_index + 1) * per_page]):
            row, col = divmod(i, COLUMNS)
            bounds = (
                col * cell_w,
                grid_top + row * cell_h,
                (col + 1) * cell_w,
                grid_top + (row + 1) * cell_h,
            )
            workspace.add(icon(ctx, pkg, bounds))
        dots_y = H - px(445)
        for i in range(pages):
            x = W // 2 + (i - (pages - 1) / 2) * px(40)
            workspace.add(
                Node(
                    "android.view.View",
                    (int(x) - px(8), dots_y, int(x) + px(8), dots_y + px(16)),
                    style=Style(bg=WHITE if i == page_index else (170, 170, 170), radius=px(8)),
                )
            )
        root.add(workspace)
        dock = Node(
            FRAME,
            (0, H - px(400), W, H - ctx.phone.display.nav_bar_height),
            rid="com.android.launcher3:id/hotseat",
        )
        for i, pkg in enumerate(DOCK):
            if ctx.phone.packages.is_installed(pkg):
                dock.add(
                    icon(ctx, pkg, (i * cell_w, H - px(390), (i + 1) * cell_w, H - px(100)), label=False)
                )
        root.add(dock)
        return root


def icon(ctx: Ctx, pkg: str, bounds: tuple[int, int, int, int], label: bool = True) -> Node:
    name = ctx.phone.display_name(pkg)
    return Node(
        TEXT,
        bounds,
        text=name if label else "",
        desc=name,
        clickable=True,
        long_clickable=True,
        on_click=lambda: ctx.launch(pkg),
        style=Style(image=f"appicon:{pkg}", fg=WHITE, size=ctx.px(36), align="center"),
    )
