"""The redactor keeps the help in messages and every URL as written, and still masks real secrets (issue 23: the
hint `key=value` became `key=***`, and `sqlite:////abs/path` lost its slashes on the way to the terminal)."""

from __future__ import annotations

import pytest

from mobile_agent.privacy.redact import redact_text, redact_url, register_secret


@pytest.mark.parametrize(
    "text",
    [
        "positional arguments are not accepted; write key=value",
        "use KEY=VALUE pairs",
        "export MOBILE_AGENT_API_KEY or pass api_key=YOUR_KEY",
        "token=$TOKEN from the environment",
        "password=... in the config",
        "secret=<value>",
    ],
)
def test_hints_survive(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("set api_key=sk-abcdef123456", "sk-abcdef123456"),
        ("token=abc123def", "abc123def"),
        ("password=hunter22", "hunter22"),
        ("key=valuex9", "valuex9"),
        ("secret=keys2", "keys2"),
        ("Authorization: Bearer abcdefghijkl", "abcdefghijkl"),
    ],
)
def test_real_secrets_are_still_masked(text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out and "***" in out


def test_a_registered_secret_that_looks_like_a_placeholder_is_masked() -> None:
    register_secret("my_token")  # somebody's real token, however it is spelled
    assert "my_token" not in redact_text("token=my_token")


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:////abs/path/mobile_agent.db",
        "sqlite:///replays/mobile_agent.db",
        "sqlite:////tmp/x.db?mode=ro",
        "file:///tmp/x",
    ],
)
def test_urls_without_secrets_are_kept_as_written(url: str) -> None:
    assert redact_url(url) == url
    assert redact_text(f"hint: point --db at {url} instead") == f"hint: point --db at {url} instead"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("sqlite:////tmp/x.db?mode=ro&password=abc12345", "sqlite:////tmp/x.db?mode=ro&password=***"),
        (
            "postgresql://u:pw123456@h:5432/db?sslmode=require#f",
            "postgresql://***@h:5432/db?sslmode=require#f",
        ),
        ("HTTP://a:b@h:8000/v1?key=zzz&x=1", "HTTP://***@h:8000/v1?key=***&x=1"),
    ],
)
def test_urls_with_secrets_are_masked_and_keep_their_shape(url: str, shown: str) -> None:
    assert redact_url(url) == shown
