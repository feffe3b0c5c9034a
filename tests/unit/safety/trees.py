"""Building uiautomator trees for the gate's unit tests, and asking the gate about an action on one."""

from mobile_agent.actions import Size
from mobile_agent.gate.guard import GuardContext

APP = "com.example.app"  # an unknown app: blind taps in it fail closed


def n(text="", bounds="[0,0][100,100]", kids="", **attrs):
    """A node: ``click=True`` for clickable, ``cls``, ``rid``, ``desc``, ``pkg`` and any other attribute by name."""
    base = {
        "text": text,
        "resource-id": attrs.pop("rid", ""),
        "class": attrs.pop("cls", "android.widget.TextView"),
        "package": attrs.pop("pkg", APP),
        "content-desc": attrs.pop("desc", ""),
        "clickable": str(attrs.pop("click", False)).lower(),
        "bounds": bounds,
        **{k.replace("_", "-"): str(v).lower() if isinstance(v, bool) else v for k, v in attrs.items()},
    }
    body = " ".join(f'{k}="{v}"' for k, v in base.items())
    return f"<node {body}>{kids}</node>" if kids else f"<node {body} />"


def tree(*windows):
    return f'<hierarchy rotation="0">{"".join(windows)}</hierarchy>'


def decide(gate, xml, action, package=APP):
    """The gate's decision on ``action`` over the tree ``xml`` of a 1080x2400 screen of ``package``."""
    ctx = GuardContext("t", action, Size(1080, 2400), package, 0, hierarchy_source=lambda: xml)
    return gate.check(ctx)
