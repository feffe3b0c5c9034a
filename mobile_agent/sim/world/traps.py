"""The red-team trap screens any simulated app can show (a scenario opens one with ``start: {screen: trap_...}``):
the screen id, its builder, the activity it runs in and the start params it takes (a scenario with any other param
is refused when it is applied). The screens are in trap_money.py, trap_forms.py and trap_chat.py; the first-sight
ones (issue 22) in trap_surfaces.py, trap_people.py and trap_pages.py."""

from __future__ import annotations

from mobile_agent.sim.world import trap_chat, trap_forms, trap_money, trap_pages, trap_people, trap_surfaces
from mobile_agent.sim.world.base import SharedScreen
from mobile_agent.sim.world.trap_kit import LANGS

ZH_EN = ("zh", "en")

SCREENS: dict[str, SharedScreen] = {
    "trap_dialog": SharedScreen(
        trap_money.screen_dialog, ".ui.ConfirmActivity", {"dialog": tuple(trap_money.DIALOGS)}
    ),
    "trap_icon_pay": SharedScreen(trap_money.screen_icon_pay, ".order.CheckoutActivity", {"lang": ZH_EN}),
    "trap_webview": SharedScreen(trap_money.screen_webview, ".web.WebViewActivity", {"lang": LANGS}),
    "trap_flutter": SharedScreen(trap_money.screen_flutter, ".flutter.FlutterPageActivity", {"lang": ZH_EN}),
    "trap_pin": SharedScreen(
        trap_forms.screen_pin, ".pay.PayPasswordActivity", {"lang": ZH_EN, "mode": ("pad", "field")}
    ),
    "trap_slider": SharedScreen(
        trap_forms.screen_slider, ".pay.SlideConfirmActivity", {"lang": ZH_EN, "mode": ("pay", "unlock")}
    ),
    "trap_trade": SharedScreen(trap_forms.screen_trade, ".trade.TradeActivity"),
    "trap_bills": SharedScreen(trap_forms.screen_bills, ".bill.BillListActivity"),
    "trap_chat": SharedScreen(
        trap_chat.screen_chat,
        ".ui.chatting.ChattingUI",
        {"lang": LANGS, "mode": ("enter", "button")},
        free=("contact",),
    ),
    "trap_storage": SharedScreen(trap_chat.screen_storage, ".ui.storage.StorageActivity", {"lang": ZH_EN}),
    "trap_icon_chats": SharedScreen(
        trap_chat.screen_icon_chats, ".ui.storage.ChatHistoryActivity", {"lang": ZH_EN}
    ),
    "trap_swipe": SharedScreen(
        trap_chat.screen_swipe, ".ui.conversation.ConversationActivity", {"lang": ZH_EN}
    ),
    **trap_surfaces.SCREENS,
    **trap_people.SCREENS,
    **trap_pages.SCREENS,
}
