"""Subscriptions are read once per process for the same bytes (apps/subscription_cache.py), rules are converted
per package when first asked for, and any bytes at all are a subscription or a one-line UserError."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobile_agent.apps import gkd_import, subscription_cache
from mobile_agent.apps.gkd_import import load_subscription
from mobile_agent.errors import UserError

FIXTURE = Path(__file__).parents[2] / "data" / "real_popups" / "gkd" / "mixed.json5"


def test_the_same_content_is_parsed_once_and_a_change_is_read_again(tmp_path, monkeypatch):
    built = []
    real = gkd_import.Subscription

    def counting(*args):
        built.append(args[1])
        return real(*args)

    monkeypatch.setattr(gkd_import, "Subscription", counting)
    first, second = tmp_path / "a.json5", tmp_path / "b.json5"
    text = FIXTURE.read_text(encoding="utf-8") + f"\n// {tmp_path}\n"  # bytes no other test has read
    first.write_text(text, encoding="utf-8")
    second.write_text(text, encoding="utf-8")
    a, b = load_subscription(first, []), load_subscription(second, [])
    assert a.subscription is b.subscription and len(built) == 1
    assert (a.source, b.source) == (str(first), str(second))
    first.write_text(text.replace("暂不升级", "暂不更新"), encoding="utf-8")
    c = load_subscription(first, [])
    assert c.subscription is not a.subscription and len(built) == 2


def test_rules_are_converted_per_package_when_asked_for(tmp_path):
    path = tmp_path / "s.json5"
    path.write_text(FIXTURE.read_text(encoding="utf-8") + f"\n// {tmp_path} lazy\n", encoding="utf-8")
    imported = load_subscription(path, [])
    sub = imported.subscription
    assert sub._converted == {}
    assert [r.id for r in imported.rules_for("bubei.tingshu")] == ["gkd/bubei.tingshu/2/0"]
    assert set(sub._converted) == {"bubei.tingshu"}
    assert imported.rules_for("com.not.in.file") == []
    assert "10 apps, 14 groups, 30 rules" in imported.brief()
    assert set(sub._converted) == {"bubei.tingshu", "com.not.in.file"}  # the brief converted nothing


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=200)
    | st.text(alphabet=st.sampled_from(list("{}[]:,'\"apsidgroupmatches0123 \n/\\*")), max_size=120).map(
        str.encode
    )
)
def test_any_bytes_are_a_subscription_or_one_line_user_error(data):
    try:
        imported = gkd_import.GkdImport(
            gkd_import.Subscription(subscription_cache.parse_json5(data, "<fuzz>"), "<fuzz>"), "<fuzz>", []
        )
    except UserError as exc:
        assert "\n" not in exc.message and exc.hint
        return
    imported.summary()  # converts every rule: refusals, never an exception


def test_a_folder_and_a_huge_file_are_one_line_errors(tmp_path, monkeypatch):
    with pytest.raises(UserError, match="is a folder"):
        load_subscription(tmp_path)
    big = tmp_path / "big.json5"
    big.write_bytes(b"{apps: []}")
    monkeypatch.setattr(subscription_cache, "MAX_BYTES", 4)
    with pytest.raises(UserError, match="larger than"):
        load_subscription(big)
