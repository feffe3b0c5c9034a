"""Importing GKD subscriptions: the fixture file against its expected result, bad files, and fuzzed structures."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from mobile_agent.actions import Action
from mobile_agent.apps.gkd_import import import_subscription, load_subscription
from mobile_agent.apps.registry import AppRegistry, shipped_apps_dir
from mobile_agent.errors import ConfigError, UserError

DATA = Path(__file__).parents[2] / "data" / "real_popups"
FIXTURE = DATA / "gkd" / "mixed.json5"
EXPECTED = yaml.safe_load((DATA / "gkd" / "expected.yaml").read_text(encoding="utf-8"))
RULES = {r["rule"]: r for r in EXPECTED["rules"]}


@pytest.fixture(scope="module")
def imported():
    return load_subscription(FIXTURE)


def test_counts_match_the_expected_result(imported):
    yes = {k for k, r in RULES.items() if r["import"] == "yes"}
    assert {r.key for r in imported.imported} == yes
    assert {s.key for s in imported.skipped} == set(RULES) - yes
    assert len(imported.imported) + len(imported.skipped) == EXPECTED["subscription"]["rules_total"]
    assert imported.summary().endswith(f"imported {len(yes)} of 30 rules (24 act, 4 switched off); refused 2")


def test_every_refusal_names_the_selector_and_why(imported):
    for skip in imported.skipped:
        expected_selector = RULES[skip.key]["selector"]
        assert repr(expected_selector) in skip.detail, skip
        assert skip.reason.startswith("invalid selector: ")  # only what is not GKD syntax at all


@pytest.mark.parametrize("key", sorted(k for k, r in RULES.items() if r["import"] == "yes"))
def test_enabled_state_and_activity_filters(imported, key):
    rule = next(r for r in imported.imported if r.key == key)
    expected = RULES[key]
    assert rule.enabled is expected["enabled"], rule.enabled_reason
    if "activity_ids" in expected:
        assert rule.rule.activities == expected["activity_ids"]
    if "exclude_activity_ids" in expected:
        assert rule.rule.not_activities == expected["exclude_activity_ids"]
    if "exclude_matches" in expected:
        assert rule.rule.unless == expected["exclude_matches"]
    if expected.get("action") == "back":
        assert rule.rule.dismiss.press == "back"
    if "pre_keys" in expected:
        assert rule.rule.after  # chained: fires only after the earlier rule


def test_global_rule_keeps_its_opt_out_and_limits(imported):
    rule = next(r for r in imported.imported if r.key == "GLOBAL/0/0")
    assert rule.package is None
    assert rule.rule.not_packages == ["com.example.optout"]
    assert rule.limits == {"matchTime": 10000, "actionMaximum": 1, "resetMatch": "app"}


FIXTURE_CASES = [(key, f["file"], f["expect"]) for key, r in RULES.items() for f in r.get("fixtures", [])]


@pytest.mark.parametrize(("key", "screen", "expect"), FIXTURE_CASES)
def test_imported_rules_do_what_the_fixtures_expect(imported, key, screen, expect):
    entry = next(r for r in imported.imported if r.key == key)
    package = entry.package or "com.autonavi.minimap"
    # every rule on its own (enabled or not), through the registry's own matching
    registry = AppRegistry.from_dirs([]).with_popup_rules({package: [entry.rule]}, [])
    match = registry.match_popup(package, (DATA / screen).read_bytes())
    if expect == "none":
        assert match is None
    elif expect == "back":
        assert match is not None and match.action == Action.press("back")
    else:
        assert match is not None, key
        assert match.action == Action.tap(*expect["tap"])


def test_chained_rule_needs_its_predecessor(imported):
    first = next(r for r in imported.imported if r.key == "com.tencent.qqmusic/9/1")
    assert first.rule.after == ["gkd/com.tencent.qqmusic/9/0"]


def test_a_subscription_in_an_apps_folder_is_imported(tmp_path):
    (tmp_path / "rules.json5").write_text(FIXTURE.read_text(encoding="utf-8"), encoding="utf-8")
    registry = AppRegistry.from_dirs([shipped_apps_dir(), tmp_path])
    assert [s.source for s in registry.subscriptions] == [str(tmp_path / "rules.json5")]
    ids = [r.id for _, r in registry.popup_rules("bubei.tingshu")]
    assert "gkd/bubei.tingshu/2/0" in ids


def test_a_bad_subscription_in_an_apps_folder_names_the_file(tmp_path):
    (tmp_path / "broken.json5").write_text("{apps: [", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        AppRegistry.from_dirs([tmp_path])
    assert "broken.json5" in caught.value.message and "JSON5" in caught.value.message


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{apps: [", "not valid JSON5"),
        ("[1, 2]", "not a GKD subscription"),
        ("{apps: 3}", "not a GKD subscription"),
        ("'just a string'", "not a GKD subscription"),
    ],
)
def test_bad_files_are_one_line_user_errors(tmp_path, content, message):
    path = tmp_path / "sub.json5"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(UserError) as caught:
        load_subscription(path)
    assert message in caught.value.message and caught.value.hint
    assert "\n" not in caught.value.message


def test_missing_and_binary_files(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        load_subscription(tmp_path / "nope.json5")
    binary = tmp_path / "bin.json5"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(UserError):
        load_subscription(binary)


def test_what_is_wrong_in_a_rule_is_refused_and_every_documented_field_is_read():
    data = {
        "apps": [
            {
                "id": "com.example.app",
                "groups": [
                    {
                        "key": 0,
                        "name": "a",
                        "rules": [{"key": 0, "action": "swipe", "matches": "[text='x']"}],
                    },
                    {
                        "key": 1,
                        "name": "b",
                        "rules": [{"key": 0, "position": {"x": 1, "y": 2}, "matches": "[text='x']"}],
                    },
                    {
                        "key": 2,
                        "name": "c",
                        "rules": [{"key": 0, "excludeAllMatches": "[text='y']", "matches": "[text='x']"}],
                    },
                    {"key": 3, "name": "d", "versionCode": {"minimum": 3}, "rules": "[text='x']"},
                    {"key": 4, "name": "e", "rules": [{"key": 0, "matches": 5}]},
                    {"key": 5, "name": "f", "rules": [{"key": 0}]},
                    {
                        "key": 6,
                        "name": "g",
                        "rules": [{"key": 0, "action": "fling", "matches": "[text='x']"}],
                    },
                    {"key": 7, "name": "h", "matchTime": "soon", "rules": "[text='x']"},
                    {
                        "key": 8,
                        "name": "i",
                        "rules": [{"key": 0, "position": {"left": 1}, "matches": "[text='x']"}],
                    },
                    {"key": 9, "name": "j", "rules": "[_id=3]"},
                    "not a group",
                ],
            },
            {"name": "no id"},
        ]
    }
    result = import_subscription(data)
    assert sorted(r.key for r in result.imported) == [
        "com.example.app/1/0",
        "com.example.app/2/0",
        "com.example.app/3/0",
    ]
    by_key = {r.key: r.rule for r in result.imported}
    assert (
        by_key["com.example.app/1/0"].gesture == "clickCenter" and by_key["com.example.app/1/0"].point.x == 1
    )
    assert by_key["com.example.app/2/0"].exclude_all == ["[text='y']"]
    assert by_key["com.example.app/3/0"].versions.code.minimum == 3
    reasons = {s.key: s.reason for s in result.skipped}
    assert "swipe needs swipeArg" in reasons["com.example.app/0/0"]
    assert "not a selector string" in reasons["com.example.app/4/0"]
    assert "placeholder" in reasons["com.example.app/5/0"]
    assert "not a GKD action" in reasons["com.example.app/6/0"]
    assert "matchTime must be an integer" in reasons["com.example.app/7/0"]
    assert "one of left/right/x and one of top/bottom/y" in reasons["com.example.app/8/0"]
    assert reasons["com.example.app/9/0"].startswith(
        "unsupported selector: _id exists only in GKD's web inspector"
    )
    assert "a group that is not an object" in reasons["com.example.app/10"]
    assert "without a package id" in reasons["apps[None]"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=30,
)
rule_keys = st.sampled_from(
    ["key", "matches", "anyMatches", "excludeMatches", "action", "position", "activityIds", "preKeys"]
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "id": st.text(min_size=1, max_size=10) | st.integers(),
                "groups": st.lists(
                    st.dictionaries(
                        st.sampled_from(["key", "name", "enable", "rules", "activityIds"]),
                        json_values | st.lists(st.dictionaries(rule_keys, json_values)),
                        max_size=5,
                    ),
                    max_size=3,
                ),
            }
        ),
        max_size=3,
    ),
    st.lists(st.dictionaries(st.sampled_from(["key", "name", "enable"]), json_values), max_size=3),
)
def test_fuzzed_subscriptions_import_or_skip_and_never_crash(apps, categories):
    result = import_subscription({"apps": apps, "categories": categories})
    for rule in result.imported:
        assert rule.rule.selector or rule.rule.any_selector
