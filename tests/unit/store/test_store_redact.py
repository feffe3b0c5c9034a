"""Which keys count as secrets: whole words, so token counts survive and tokens do not."""

from __future__ import annotations

import pytest

from mobile_agent.privacy.redact import is_secret_key, redact_url, scrub_secrets


@pytest.mark.parametrize(
    "key",
    [
        "api_key",
        "OPENAI_API_KEY",
        "apiKey",
        "x-api-key",
        "APIKEY",
        "token",
        "access_token",
        "authToken",
        "secret",
        "client_secret",
        "password",
        "DB_PASSWORD",
        "Authorization",
        "private_key",
        "aws_secret_key",
    ],
)
def test_secret_keys(key: str) -> None:
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key", ["max_tokens", "prompt_tokens", "model", "keyboard", "monkey", "base_url", "key"]
)
def test_ordinary_keys(key: str) -> None:
    assert not is_secret_key(key)


def test_scrub_is_deep_and_does_not_modify_the_input() -> None:
    value = {"a": [{"token": 1, "b": 2}], "url": "https://u:p@h/x", "plain": "https://h/x"}
    assert scrub_secrets(value) == {"a": [{"b": 2}], "url": "https://***@h/x", "plain": "https://h/x"}
    assert value["a"][0]["token"] == 1


def test_redact_url_masks_userinfo_and_secret_query_values() -> None:
    assert redact_url("http://h:1/v1?x=1") == "http://h:1/v1?x=1"
    assert redact_url("http://user@h:1/") == "http://***@h:1/"  # a bare user is often a token
    assert redact_url("http://u:pw@h:1/v1?x=1") == "http://***@h:1/v1?x=1"
    assert redact_url("http://h/v1?api_key=k1&x=1&key=k2") == "http://h/v1?api_key=***&x=1&key=***"
