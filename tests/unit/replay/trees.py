"""View-tree dumps written by hand for the replay's unit tests: nodes, a screen, chat rows, buttons, a dialog."""

from __future__ import annotations

from xml.sax.saxutils import quoteattr


def node(bounds: str, text: str = "", *, rid: str = "", cls: str = "android.widget.TextView", **extra) -> str:
    children = extra.pop("children", "")
    attrs = {"text": text, "resource-id": rid, "class": cls, "package": "com.x", "bounds": bounds, **extra}
    rendered = " ".join(f"{k.replace('_', '-')}={quoteattr(str(v))}" for k, v in attrs.items())
    return f"<node {rendered}>{children}</node>"


def screen(*nodes: str) -> str:
    root = node("[0,0][1080,2400]", cls="android.widget.FrameLayout", children="".join(nodes))
    return f"<?xml version='1.0' encoding='UTF-8'?><hierarchy rotation='0'>{root}</hierarchy>"


def chat_row(name: str, preview: str, time: str, top: int = 200) -> str:
    bottom = top + 190
    return node(
        f"[0,{top}][1080,{bottom}]",
        rid="com.x:id/row",
        cls="android.widget.LinearLayout",
        clickable="true",
        children=node(f"[200,{top + 20}][700,{top + 90}]", name, rid="com.x:id/name")
        + node(f"[200,{top + 100}][900,{top + 170}]", preview, rid="com.x:id/preview")
        + node(f"[900,{top + 20}][1060,{top + 90}]", time, rid="com.x:id/time"),
    )


def button(label: str, bounds: str = "[100,2200][980,2330]", rid: str = "com.x:id/ok") -> str:
    return node(bounds, label, rid=rid, cls="android.widget.Button", clickable="true")


def dialog(*texts_and_button: str) -> str:
    return node(
        "[60,800][1020,1600]",
        rid="com.x:id/dialog",
        cls="android.widget.FrameLayout",
        children="".join(texts_and_button),
    )


def chat_list(*rows: tuple[str, str], top: int = 200, bounds: str = "[0,200][1080,2200]") -> str:
    """A list (its own resource-id, unique on the screen) of chat rows (name, preview) from ``top`` down."""
    shown = "".join(chat_row(name, preview, "10:21", top + 190 * i) for i, (name, preview) in enumerate(rows))
    return node(bounds, rid="com.x:id/list", cls="androidx.recyclerview.widget.RecyclerView", children=shown)


def splash(bounds: str = "[0,0][1080,2400]") -> str:
    """A full-screen splash ad drawn over the page: its frame takes no touch, its picture covers everything."""
    return node(
        bounds,
        rid="com.x:id/splash_container",
        cls="android.widget.FrameLayout",
        children=node(bounds, rid="com.x:id/splash_ad", cls="android.widget.ImageView", content_desc="广告")
        + node("[820,136][1040,216]", "跳过 3", rid="com.x:id/skip", clickable="true"),
    )
