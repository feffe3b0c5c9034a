"""What a GKD rule says about when and how it acts, honoured per episode (apps/popups.py): matchDelay, matchTime,
actionMaximum (and its shared key), resetMatch, actionCd, actionDelay, preKeys, action none; the actions; version
filters; a global rule's app scopes. Subscriptions and screens here are written for these tests."""

from __future__ import annotations

from mobile_agent.actions import Action, ActionKind
from mobile_agent.apps.gkd_import import import_subscription
from mobile_agent.apps.popups import AppVersion, RuleMemory, ScreenFacts, rule_needs, run_rules
from mobile_agent.apps.registry import AppRegistry
from mobile_agent.screen.viewtree import ViewTree

APP = "com.example.app"


def screen(*labels: str, package: str = APP) -> ViewTree:
    """A 1080x2400 screen; each label is a clickable TextView one row down."""
    rows = "".join(
        f'<node index="{i}" text="{t}" resource-id="{package}:id/r{i}" class="android.widget.TextView" '
        f'package="{package}" content-desc="" clickable="true" bounds="[100,{200 + i * 200}][500,{300 + i * 200}]" />'
        for i, t in enumerate(labels)
    )
    xml = (
        f'<hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" '
        f'package="{package}" content-desc="" bounds="[0,0][1080,2400]">{rows}</node></hierarchy>'
    )
    tree = ViewTree.parse(xml)
    assert tree is not None
    return tree


def subscription(*groups: dict, globals_: tuple[dict, ...] = (), categories: tuple[dict, ...] = ()) -> object:
    return import_subscription(
        {
            "apps": [{"id": APP, "groups": list(groups)}],
            "globalGroups": list(globals_),
            "categories": list(categories),
        }
    )


class Episode:
    """Screens of one episode fed to the rules, with a clock the test moves."""

    def __init__(self, imported, package: str = APP) -> None:
        self.rules = [(None, r, rule_needs(r)) for r in imported.rules_for(package) + imported.shared_rules()]
        self.memory = RuleMemory()

    def step(
        self, t: float, tree: ViewTree, *, package: str = APP, activity: str | None = None, version=None
    ):
        facts = ScreenFacts(package, activity, None, version, self.memory, t)
        rules = (
            self.rules if package == APP else [x for x in self.rules if x[1].group.startswith("gkd/GLOBAL")]
        )
        fired = [o for _, o in run_rules(rules, tree, facts, consequential=lambda e: None) if o.fires]
        return fired[0].rule.id if fired else None


SKIP = screen("跳过")


def test_match_time_and_action_maximum_reset_when_the_app_comes_back():
    sub = subscription(
        {
            "key": 0,
            "name": "开屏广告",
            "matchTime": 10000,
            "actionMaximum": 1,
            "resetMatch": "app",
            "rules": "[text='跳过']",
        }
    )
    ep = Episode(sub)
    assert ep.step(0, SKIP) == f"gkd/{APP}/0/0"
    assert ep.step(1, SKIP) is None  # at most once
    ep.step(2, screen("桌面", package="com.example.other"), package="com.example.other")
    assert ep.step(3, SKIP) == f"gkd/{APP}/0/0"  # back in the app: awake again
    assert ep.step(14, SKIP) is None  # actionMaximum again, and matchTime is over too
    late = Episode(sub)
    late.step(0, screen("首页"))
    assert late.step(11, SKIP) is None  # 11 s after the app appeared: past matchTime


def test_reset_on_activity_is_the_default():
    sub = subscription({"key": 0, "name": "开屏广告", "actionMaximum": 1, "rules": "[text='跳过']"})
    ep = Episode(sub)
    assert ep.step(0, SKIP, activity="a.Splash") is not None
    assert ep.step(2, SKIP, activity="a.Splash") is None
    assert ep.step(4, SKIP) is None  # an unknown activity continues the last one
    ep.step(6, screen("首页"), activity="a.Main")
    assert ep.step(8, SKIP, activity="a.Splash") is not None


def test_reset_on_match_wakes_when_the_screen_enters_the_rule_activities():
    sub = subscription(
        {
            "key": 0,
            "name": "更新提示",
            "actionMaximum": 1,
            "resetMatch": "match",
            "activityIds": ".Main",
            "rules": "[text='跳过']",
        }
    )
    ep = Episode(sub)
    assert ep.step(0, SKIP, activity=f"{APP}.Main") is not None
    assert ep.step(2, SKIP, activity=f"{APP}.MainTab") is None  # still inside .Main*: no reset
    ep.step(4, screen("设置"), activity=f"{APP}.Settings")
    assert ep.step(6, SKIP, activity=f"{APP}.Main") is not None


def test_match_delay_and_action_cd():
    sub = subscription(
        {"key": 0, "name": "开屏广告", "matchDelay": 2000, "actionCd": 3000, "rules": "[text='跳过']"}
    )
    ep = Episode(sub)
    assert ep.step(0, SKIP) is None  # asleep for the first 2 s
    assert ep.step(2.5, SKIP) is not None
    assert ep.step(4, SKIP) is None  # 3 s between actions
    assert ep.step(6, SKIP) is not None


def test_action_delay_acts_when_the_rule_is_still_there():
    sub = subscription({"key": 0, "name": "开屏广告", "actionDelay": 1000, "rules": "[text='跳过']"})
    ep = Episode(sub)
    assert ep.step(0, SKIP) is None
    assert ep.step(0.5, SKIP) is None
    assert ep.step(1.2, SKIP) is not None
    again = Episode(sub)
    again.step(0, SKIP)
    again.step(0.5, screen("首页"))  # gone on the next screen: the wait starts over
    assert again.step(1.2, SKIP) is None


def test_shared_action_maximum_key():
    sub = subscription(
        {
            "key": 0,
            "name": "开屏广告",
            "actionMaximum": 1,
            "rules": [
                {"key": 0, "matches": "[text='跳过']"},
                {"key": 1, "actionMaximumKey": 0, "matches": "[text='关闭']"},
            ],
        }
    )
    ep = Episode(sub)
    assert ep.step(0, SKIP) == f"gkd/{APP}/0/0"
    assert ep.step(2, screen("关闭")) is None  # rule 1 counts with rule 0


def test_pre_keys_and_action_none_chain_steps():
    sub = subscription(
        {
            "key": 0,
            "name": "分段广告",
            "rules": [
                {"key": 0, "action": "none", "matches": "[text='广告']"},
                {"key": 1, "preKeys": [0], "matches": "[text='不感兴趣']"},
            ],
        }
    )
    ep = Episode(sub)
    assert ep.step(0, screen("不感兴趣")) is None  # nothing before it
    assert ep.step(1, screen("广告")) is None  # none: matched and remembered, nothing done
    assert ep.step(2, screen("不感兴趣")) == f"gkd/{APP}/0/1"


def test_gkd_actions():
    sub = subscription(
        {
            "key": 0,
            "name": "广告-a",
            "rules": [{"key": 0, "action": "longClick", "matches": "[text='长按']"}],
        },
        {"key": 1, "name": "广告-b", "rules": [{"key": 0, "action": "back", "matches": "[text='返回']"}]},
        {
            "key": 2,
            "name": "广告-c",
            "rules": [
                {
                    "key": 0,
                    "matches": "[text='滑动']",
                    "swipeArg": {
                        "start": {"x": "screenWidth/2", "y": "screenHeight*0.75"},
                        "end": {"x": "screenWidth/2", "y": "screenHeight*0.25"},
                        "duration": 300,
                    },
                }
            ],
        },
        {
            "key": 3,
            "name": "广告-d",
            "rules": [{"key": 0, "position": {"right": 10, "top": "height/2"}, "matches": "[text='角']"}],
        },
        {
            "key": 4,
            "name": "广告-e",
            "rules": [{"key": 0, "position": {"x": 5000, "y": 0}, "matches": "[text='外']"}],
        },
    )
    by_id = {r.id: r for r in sub.rules_for(APP)}

    def act(rule_key: str, label: str) -> Action | None:
        rule = by_id[f"gkd/{APP}/{rule_key}"]
        out = list(
            run_rules([(None, rule, ())], screen(label), ScreenFacts(APP, None), consequential=lambda e: None)
        )
        return out[0][1].action

    long_press = act("0/0", "长按")
    assert long_press.kind is ActionKind.LONG_PRESS and long_press.duration_ms == 400
    assert act("1/0", "返回") == Action.press("back")
    assert act("2/0", "滑动") == Action.swipe(540, 1800, 540, 600, duration_ms=300)
    assert act("3/0", "角") == Action.tap(490, 250)  # 10 px in from the right edge, half-way down
    assert act("4/0", "外") is None  # off screen: not a match


def test_version_filters_hold_only_for_the_versions_they_name():
    sub = subscription(
        {
            "key": 0,
            "name": "开屏广告",
            "rules": [{"key": 0, "versionCode": {"minimum": 300}, "matches": "[text='跳过']"}],
        }
    )
    ep = Episode(sub)
    assert ep.step(0, SKIP, version=AppVersion(299, "2.9")) is None
    assert Episode(sub).step(0, SKIP, version=AppVersion(300, "3.0")) is not None
    assert Episode(sub).step(0, SKIP, version=None) is not None  # unknown: the selector decides


def test_global_rules_respect_app_scopes_and_system_apps():
    glob = {
        "key": 0,
        "name": "开屏广告-全局",
        "rules": "[text='跳过']",
        "apps": [
            {"id": "com.example.scoped", "activityIds": ".Splash"},
            {"id": "com.example.off", "enable": False},
        ],
    }
    sub = import_subscription({"apps": [], "globalGroups": [glob]})
    registry = AppRegistry.from_dirs([]).with_subscription(sub)

    def fires(package: str, activity: str | None = None) -> bool:
        xml = f'<hierarchy><node index="0" text="跳过" class="android.widget.TextView" package="{package}" bounds="[0,0][200,100]"/></hierarchy>'
        return registry.match_popup(package, xml, activity=activity) is not None

    assert fires("com.example.any")
    assert not fires("com.example.off")
    assert fires("com.example.scoped", "com.example.scoped.Splash") and not fires(
        "com.example.scoped", "com.example.scoped.Main"
    )
    assert not fires("com.android.settings") and not fires("com.miui.home.launcher")
    only_listed = import_subscription({"apps": [], "globalGroups": [{**glob, "matchAnyApp": False}]})
    listed = AppRegistry.from_dirs([]).with_subscription(only_listed)
    xml = '<hierarchy><node index="0" text="跳过" class="android.widget.TextView" package="com.example.any" bounds="[0,0][200,100]"/></hierarchy>'
    assert listed.match_popup("com.example.any", xml) is None


def test_disable_if_app_group_match():
    data = {
        "globalGroups": [
            {"key": 0, "name": "开屏广告-全局", "disableIfAppGroupMatch": "", "rules": "[text='跳过']"}
        ],
        "apps": [
            {
                "id": "com.example.own",
                "groups": [{"key": 0, "name": "开屏广告-全局", "enable": False, "rules": "[text='x']"}],
            }
        ],
    }
    (rule,) = import_subscription(data).shared_rules()
    assert rule.not_packages == ["com.example.own"]


def test_episodes_keep_their_own_memory():
    sub = subscription(
        {"key": 0, "name": "开屏广告", "actionMaximum": 1, "resetMatch": "app", "rules": "[text='跳过']"}
    )
    registry = AppRegistry.from_dirs([]).with_subscription(sub)
    xml = f'<hierarchy><node index="0" text="跳过" class="android.widget.TextView" package="{APP}" bounds="[0,0][200,100]"/></hierarchy>'
    assert registry.match_popup(APP, xml, episode="ep-1") is not None
    assert registry.match_popup(APP, xml, episode="ep-1") is None  # once per launch in this episode
    assert registry.match_popup(APP, xml, episode="ep-2") is not None
    assert registry.match_popup(APP, xml) is not None  # no episode: no memory, no limits


def test_a_consequential_target_is_never_long_pressed_either():
    sub = subscription(
        {"key": 0, "name": "广告-a", "rules": [{"key": 0, "action": "longClick", "matches": "[text='删除']"}]}
    )
    (rule,) = sub.rules_for(APP)
    ((_, outcome),) = run_rules(
        [(None, rule, ())], screen("删除"), ScreenFacts(APP, None), consequential=lambda e: "delete"
    )
    assert outcome.action is None and "consequential" in outcome.reason
