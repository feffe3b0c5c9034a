"""The window skeleton a foreground read is reused for: several window roots in no fixed order, content changes
that keep it, and window changes (another activity's layout, a keyboard, a dialog) that do not."""

from __future__ import annotations

from mobile_agent.device.foreground import ForegroundMemory, window_skeleton


def _node(rid: str, cls: str, package: str, children: str = "", text: str = "") -> str:
    head = (
        f'<node index="0" text="{text}" resource-id="{rid}" class="{cls}" package="{package}" content-desc=""'
    )
    return f'{head} bounds="[0,0][1,1]">{children}</node>' if children else f'{head} bounds="[0,0][1,1]" />'


STATUS = _node(
    "",
    "android.widget.FrameLayout",
    "com.android.systemui",
    _node("", "android.widget.TextView", "com.android.systemui", text="10:24"),
)
IME = _node(
    "", "android.widget.FrameLayout", "com.example.ime", _node("key", "android.view.View", "com.example.ime")
)


def _chat(message: str, button: str = "more") -> str:
    bubbles = _node(
        "msgs",
        "androidx.recyclerview.widget.RecyclerView",
        "com.tencent.mm",
        _node("bubble", "android.widget.TextView", "com.tencent.mm", text=message),
    )
    bar = _node(
        "bar",
        "android.widget.LinearLayout",
        "com.tencent.mm",
        _node(button, "android.widget.Button", "com.tencent.mm"),
    )
    return _node("", "android.widget.FrameLayout", "com.tencent.mm", bubbles + bar)


def _dump(*roots: str) -> str:
    return '<?xml version="1.0"?><hierarchy rotation="0">' + "".join(roots) + "</hierarchy>"


def test_the_roots_order_and_the_content_do_not_change_the_skeleton():
    one = window_skeleton(_dump(STATUS, _chat("hi")))
    assert one == window_skeleton(_dump(_chat("hi again", button="send"), STATUS))
    assert {"com.android.systemui", "com.tencent.mm"} <= one


def test_a_keyboard_or_another_layout_changes_it():
    chat = window_skeleton(_dump(STATUS, _chat("hi")))
    assert window_skeleton(_dump(STATUS, _chat("hi"), IME)) != chat
    home = _node(
        "",
        "android.widget.FrameLayout",
        "com.tencent.mm",
        _node(
            "tabs",
            "android.widget.LinearLayout",
            "com.tencent.mm",
            _node("tab", "android.widget.TextView", "com.tencent.mm"),
        ),
    )
    assert window_skeleton(_dump(STATUS, home)) != chat
    assert window_skeleton("") is None and window_skeleton('<hierarchy rotation="0"></hierarchy>') is None


def test_a_read_holds_only_for_the_same_skeleton_and_when_the_activity_is_not_needed():
    memory = ForegroundMemory()
    chat = window_skeleton(_dump(STATUS, _chat("hi")))
    assert memory.still_holds(chat, None) is None  # nothing read yet
    memory.remember("com.tencent.mm", "com.tencent.mm.ui.chatting.ChattingUI", chat)
    assert memory.still_holds(chat, None).activity == "com.tencent.mm.ui.chatting.ChattingUI"
    assert memory.still_holds(chat, lambda package: package == "com.tencent.mm") is None
    assert memory.still_holds(None, None) is None  # no tree to compare
    assert memory.still_holds(window_skeleton(_dump(STATUS, _chat("hi"), IME)), None) is None
    memory.remember("", "", chat)  # a failed read is not reused
    assert memory.still_holds(chat, None) is None
