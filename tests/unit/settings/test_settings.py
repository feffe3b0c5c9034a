"""One settings object: flags > environment (ours and adb's own) > config file > defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mobile_agent.errors import ConfigError
from mobile_agent.settings.values import DEFAULT_ADB, adb_from_socket, load_settings

ENV = (
    "MOBILE_AGENT_BASE_URL",
    "MOBILE_AGENT_MODEL",
    "MOBILE_AGENT_FAMILY",
    "MOBILE_AGENT_ADB",
    "MOBILE_AGENT_DEVICE",
    "MOBILE_AGENT_DB",
    "MOBILE_AGENT_APPS",
    "MOBILE_AGENT_CONFIG",
    "ANDROID_SERIAL",
    "ANDROID_ADB_SERVER_PORT",
    "ADB_SERVER_SOCKET",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path: Path):
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    return monkeypatch


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "xdg" / "mobile-agent" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults() -> None:
    s = load_settings()
    assert s.adb == DEFAULT_ADB and s.device is None and s.family == "ui-venus-2"
    assert s.base_url == ["http://127.0.0.1:8000/v1"]


def test_flags_beat_environment_beat_config_file(clean_env, tmp_path: Path) -> None:
    write_config(
        tmp_path, 'model = "from-file"\nfamily = "autoglm"\nadb = "127.0.0.1:1111"\ndevice = "file-phone"\n'
    )
    assert load_settings().model == "from-file" and load_settings().adb == "127.0.0.1:1111"
    clean_env.setenv("MOBILE_AGENT_MODEL", "from-env")
    clean_env.setenv("ANDROID_SERIAL", "env-phone")
    s = load_settings()
    assert (s.model, s.family, s.device) == ("from-env", "autoglm", "env-phone")
    s = load_settings(model="from-flag", device="flag-phone")
    assert (s.model, s.device) == ("from-flag", "flag-phone")


def test_adb_server_from_adbs_own_variables(clean_env) -> None:
    clean_env.setenv("ANDROID_ADB_SERVER_PORT", "27037")
    assert load_settings().adb == "127.0.0.1:27037"
    clean_env.setenv("ADB_SERVER_SOCKET", "tcp:10.0.0.7:5038")
    assert load_settings().adb == "10.0.0.7:5038"  # the socket spec wins over the port, as in adb
    clean_env.setenv("MOBILE_AGENT_ADB", "127.0.0.1:4000")
    assert load_settings().adb == "127.0.0.1:4000"
    assert load_settings(adb="127.0.0.1:5000").adb == "127.0.0.1:5000"


def test_adb_variables_reach_the_device_layer(clean_env) -> None:
    from mobile_agent.device.android import parse_adb_address

    clean_env.setenv("ANDROID_ADB_SERVER_PORT", "27037")
    assert parse_adb_address(None) == ("127.0.0.1", 27037)


def test_base_urls_from_one_environment_string(clean_env) -> None:
    clean_env.setenv("MOBILE_AGENT_BASE_URL", "http://a:1/v1, http://b:2/v1")
    assert load_settings().base_url == ["http://a:1/v1", "http://b:2/v1"]


def test_named_config_file(clean_env, tmp_path: Path) -> None:
    path = tmp_path / "elsewhere.toml"
    path.write_text('base_url = ["http://x/v1"]\n', encoding="utf-8")
    clean_env.setenv("MOBILE_AGENT_CONFIG", str(path))
    assert load_settings().base_url == ["http://x/v1"]
    clean_env.setenv("MOBILE_AGENT_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(ConfigError, match="config file not found"):
        load_settings()


@pytest.mark.parametrize(
    "text, expected",
    [
        ("model = \n", "not valid TOML"),
        ('modle = "x"\n', "unknown setting 'modle'"),
        ("model = 3\n", "setting model"),
    ],
)
def test_bad_config_file_is_one_config_error_naming_the_file(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = write_config(tmp_path, text)
    with pytest.raises(ConfigError, match=expected) as caught:
        load_settings()
    assert expected.startswith("setting") or str(path) in caught.value.message


def test_bad_socket_spec(clean_env) -> None:
    clean_env.setenv("ADB_SERVER_SOCKET", "localfilesystem:/tmp/adb")
    with pytest.raises(ConfigError, match="ADB_SERVER_SOCKET"):
        load_settings()


@given(st.text(max_size=40))
def test_socket_parser_never_raises_anything_but_config_error(value: str) -> None:
    try:
        assert ":" in adb_from_socket(value)
    except ConfigError:
        pass


def test_run_task_reads_the_environment(clean_env) -> None:
    """The library, not only the CLI: an unknown family from MOBILE_AGENT_FAMILY fails before any phone."""
    from mobile_agent.agent.runtime import run_task
    from mobile_agent.errors import UserError

    clean_env.setenv("MOBILE_AGENT_FAMILY", "no-such-family")
    with pytest.raises(UserError, match="no-such-family"):
        run_task("打开设置")


def test_farm_commands_take_the_config_file_below_flags_and_stored_runs(tmp_path, monkeypatch):
    from mobile_agent.cli.farm_batch import _Overrides, _settings

    config = tmp_path / "config.toml"
    config.write_text('model = "from-config"\nfamily = "autoglm"\nbase_url = ["http://gpu:9000/v1"]\n')
    monkeypatch.setenv("MOBILE_AGENT_CONFIG", str(config))
    for name in ("MOBILE_AGENT_MODEL", "MOBILE_AGENT_FAMILY", "MOBILE_AGENT_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    fresh = _settings(_Overrides({}), {})
    assert (fresh["model"], fresh["family"], fresh["base_url"]) == (
        "from-config",
        "autoglm",
        ["http://gpu:9000/v1"],
    )
    resumed = _settings(_Overrides({}), {"model": "stored"})
    assert resumed["model"] == "stored" and resumed["family"] == "autoglm"
    flagged = _settings(_Overrides({"model": "flag"}), {"model": "stored"})
    assert flagged["model"] == "flag"


def test_each_setting_reads_its_own_variables_only(clean_env) -> None:
    """MOBILE_AGENT_DEVICE before ANDROID_SERIAL, either apps variable, names matched ignoring case; a look-alike
    such as DEVICE or APPS_DIR, which other programs set for their own reasons, is not ours."""
    clean_env.setenv("DEVICE", "not-ours")
    clean_env.setenv("APPS_DIR", "/not/ours")
    assert load_settings().device is None and load_settings().apps_dir is None
    clean_env.setenv("ANDROID_SERIAL", "adb-phone")
    assert load_settings().device == "adb-phone"
    clean_env.setenv("MOBILE_AGENT_DEVICE", "our-phone")
    assert load_settings().device == "our-phone"
    clean_env.setenv("MOBILE_AGENT_APPS_DIR", "/apps")
    assert load_settings().apps_dir == "/apps"
    clean_env.setenv("mobile_agent_model", "lower-case")
    assert load_settings().model == "lower-case"


def test_a_bad_environment_value_is_a_config_error_naming_the_setting(clean_env) -> None:
    clean_env.setenv("MOBILE_AGENT_HISTORY_SCALE", "2")
    with pytest.raises(ConfigError, match="setting history_scale"):
        load_settings()
    clean_env.setenv("MOBILE_AGENT_HISTORY_SCALE", "0.5")
    clean_env.setenv("MOBILE_AGENT_HISTORY_QUALITY", "60")
    s = load_settings()
    assert (s.history_scale, s.history_quality) == (0.5, 60)
    with pytest.raises(ConfigError, match="setting nonsense"):
        load_settings(nonsense=1)
