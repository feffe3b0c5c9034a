"""The gate on words, characters and links written to slip past it: a typed line separator submits, a "Clear all"
takes the meaning of the dialog it sits in, a link is judged by what it opens."""

import pytest

from mobile_agent.actions import Action, Size
from mobile_agent.agent.guards import GuardContext, Verdict
from mobile_agent.agent.safety import SafetyGate

PKG = "org.telegram.messenger"


def node(text="", bounds="[0,0][100,100]", clickable=False, cls="android.widget.TextView", kids="", **extra):
    more = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in extra.items())
    return (
        f'<node text="{text}" resource-id="" class="{cls}" package="{PKG}" content-desc="" '
        f'clickable="{str(clickable).lower()}" bounds="{bounds}" visible-to-user="true"{more}>{kids}</node>'
    )


def dump(*nodes):
    return f'<hierarchy rotation="0">{node(bounds="[0,0][1080,2400]", kids="".join(nodes))}</hierarchy>'


def check(action, xml=None):
    ctx = GuardContext("t", action, Size(1080, 2400), PKG, 0, hierarchy_source=lambda: xml)
    return SafetyGate(registry=None).check(ctx)


CHAT = dump(
    node("Alice", "[0,84][1080,224]"),
    node("", "[20,2200][900,2320]", True, cls="android.widget.EditText", focused="true", hint="Message"),
)


@pytest.mark.parametrize("sep", ["\n", "\r", "\u2028", "\u2029", "\u0085"])
def test_any_line_separator_typed_into_a_chat_sends(sep):
    decision = check(Action.type(f"see you{sep}"), CHAT)
    assert decision.verdict is Verdict.ASK and decision.kind == "send", decision


def test_typing_without_a_line_break_sends_nothing():
    assert check(Action.type("see you"), CHAT).verdict is Verdict.ALLOW


def _dialog(body: str) -> str:
    return dump(
        node(
            bounds="[80,900][1000,1500]",
            cls="android.widget.LinearLayout",
            kids=node(body, "[120,950][960,1200]")
            + node("Cancel", "[120,1350][500,1450]", True, cls="android.widget.Button")
            + node("Clear all", "[560,1350][960,1450]", True, cls="android.widget.Button"),
        )
    )


def test_clear_all_under_a_delete_question_asks_and_over_notifications_does_not():
    asked = check(Action.tap(760, 1400), _dialog("Delete all messages in this chat? This cannot be undone."))
    assert asked.verdict is Verdict.ASK and asked.kind == "delete", asked
    assert check(Action.tap(760, 1400), _dialog("3 new notifications")).verdict is Verdict.ALLOW


@pytest.mark.parametrize(
    ("link", "verdict"),
    [
        ("https://cash.app/$alicesmith/25", Verdict.ASK),
        ("https://qr.95516.com/00010000/6222", Verdict.ASK),
        ("alipays://platformapi/startapp?appId=20000003", Verdict.ALLOW),
        ("geo:0,0?q=coffee+near+me", Verdict.ALLOW),
    ],
)
def test_a_link_is_judged_by_what_it_opens(link, verdict):
    assert check(Action.launch(link)).verdict is verdict
