"""Text from a model or an endpoint on its way to a terminal or a log: escape sequences and control characters
are stripped before printing; secrets (known values and secret-shaped ones) are masked."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mobile_agent.cli.terminal import printable, shown
from mobile_agent.privacy.redact import redact_text, redact_url, register_secret

ATTACKS = [
    "\x1b[2J\x1b[H",  # clear the screen, cursor home
    "\x1b]0;owned\x07",  # window title
    "\x1b]52;c;ZWNobyBoaQ==\x07",  # write the clipboard
    "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\",  # hyperlink
    "\x1bP+q544e\x1b\\",  # DCS query
    "\x9b31m",  # 8-bit CSI
    "\x1b[?1049h",  # alternate screen
    "a\rb",  # overwrite the line
    "\u202eevil",  # bidi override
]


def test_known_attacks_are_stripped():
    for attack in ATTACKS:
        cleaned = printable(f"ok {attack} ok")
        assert "\x1b" not in cleaned and "\x9b" not in cleaned and "\r" not in cleaned, repr(cleaned)
        assert "\x07" not in cleaned and "\u202e" not in cleaned


def test_newlines_tabs_and_cjk_survive():
    assert printable("第一行\n\t第二行 😀") == "第一行\n\t第二行 😀"


@settings(max_examples=500)
@given(st.text())
def test_printable_leaves_no_control_character(text):
    cleaned = printable(text)
    assert all(ch in "\n\t" or not (ord(ch) < 32 or 0x7F <= ord(ch) <= 0x9F) for ch in cleaned)
    assert printable(cleaned) == cleaned


@given(st.text().filter(lambda t: "\\" not in t))  # rich doubles a trailing backslash: harmless
def test_shown_is_literal_rich_markup(text):
    from rich.text import Text

    assert Text.from_markup(shown(text)).plain == printable(text)


def test_known_secrets_and_shapes_are_masked():
    register_secret("sk-unit-known-000111")
    text = (
        "HTTP 401 {'message': 'bad key sk-unit-known-000111', 'Authorization': 'Bearer sk-other-99887766'} "
        "GET http://bob:hunter22@h/v1?api_key=k123456&model=m x-api-key: zzz111222"
    )
    cleaned = redact_text(text)
    for secret in ("sk-unit-known-000111", "sk-other-99887766", "hunter22", "bob", "k123456", "zzz111222"):
        assert secret not in cleaned, (secret, cleaned)
    assert "model=m" in cleaned and "HTTP 401" in cleaned


def test_ordinary_text_is_left_alone():
    for text in (
        "max_tokens=100 prompt tokens 5",
        "打开设置",
        "Basic settings",
        "tap (540, 380)",
        "key points",
    ):
        assert redact_text(text) == text


secret_value = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEF0123456789-_.~", min_size=8, max_size=40)


@settings(max_examples=200)
@given(secret_value, st.sampled_from(["api_key", "key", "access_token", "sig"]))
def test_a_secret_query_value_never_survives_redact_url(value, name):
    url = f"https://h.example/v1/chat?{name}={value}&x=1"
    assert value not in redact_url(url) and value not in redact_text(f"calling {url} failed")


@settings(max_examples=200)
@given(secret_value, secret_value)
def test_userinfo_never_survives(user, password):
    url = f"http://{user}:{password}@h:8000/v1"
    assert password not in redact_url(url) and f"{user}:" not in redact_url(url)
