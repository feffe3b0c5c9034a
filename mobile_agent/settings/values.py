"""One settings object for the library and the CLI: flags > environment > config file > defaults.

``load_settings(**flags)`` is what every entry point calls with the arguments it was given (None = not given)::

    settings = load_settings(model="qwen3-vl")        # the rest from MOBILE_AGENT_* / ANDROID_* / config.toml

The environment speaks both our names (MOBILE_AGENT_BASE_URL, ...) and adb's own: ANDROID_SERIAL picks the phone,
ADB_SERVER_SOCKET (tcp:HOST:PORT) or ANDROID_ADB_SERVER_PORT the adb server, as they do for adb itself. The config
file is TOML (keys as in the README table) at MOBILE_AGENT_CONFIG, else $XDG_CONFIG_HOME/mobile-agent/config.toml
(~/.config/mobile-agent/config.toml).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mobile_agent.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CONFIG_ENV = "MOBILE_AGENT_CONFIG"
DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
DEFAULT_MODEL = "ui-venus-2"
DEFAULT_FAMILY = "ui-venus-2"
DEFAULT_ADB = "127.0.0.1:5037"
SETTINGS_HINT = "see the settings table in the README (name, environment variable, config key, default)"


def config_path() -> Path:
    """Where the config file is looked for (it need not exist)."""
    named = os.environ.get(CONFIG_ENV)
    if named:
        return Path(named).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "mobile-agent" / "config.toml"


def adb_from_socket(value: str) -> str:
    """adb's ADB_SERVER_SOCKET (``tcp:HOST:PORT`` or ``tcp:PORT``) as HOST:PORT."""
    spec = value.strip()
    if not spec.startswith("tcp:"):
        raise ConfigError(
            f"ADB_SERVER_SOCKET={value!r} is not a TCP socket spec",
            "write it as adb does: tcp:HOST:PORT (e.g. tcp:127.0.0.1:5037)",
        )
    rest = spec.removeprefix("tcp:")
    return rest if ":" in rest else f"127.0.0.1:{rest}"


def adb_from_environment(environ: dict[str, str] | None = None) -> str | None:
    """The adb server adb itself would use: MOBILE_AGENT_ADB, else ADB_SERVER_SOCKET, else ANDROID_ADB_SERVER_PORT."""
    env = os.environ if environ is None else environ
    if env.get("MOBILE_AGENT_ADB"):
        return env["MOBILE_AGENT_ADB"].strip()
    if env.get("ADB_SERVER_SOCKET"):
        return adb_from_socket(env["ADB_SERVER_SOCKET"])
    if env.get("ANDROID_ADB_SERVER_PORT"):
        return f"127.0.0.1:{env['ANDROID_ADB_SERVER_PORT'].strip()}"
    return None


def read_config_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        if os.environ.get(CONFIG_ENV):
            raise ConfigError(
                "config file not found", f"unset {CONFIG_ENV} or create the file", path=str(path)
            )
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"not valid TOML ({exc})", SETTINGS_HINT, path=str(path)) from None
    unknown = sorted(set(data) - set(Settings.model_fields))
    if unknown:
        raise ConfigError(
            f"unknown setting {unknown[0]!r}",
            f"the config file may set: {', '.join(Settings.model_fields)}",
            path=str(path),
        )
    return data


class Settings(BaseModel):
    """Where the phone, the adb server, the model and the store are. See the README's settings table."""

    model_config = ConfigDict(extra="forbid")

    device: str | None = None
    adb: str = DEFAULT_ADB
    base_url: list[str] = [DEFAULT_BASE_URL]
    model: str = DEFAULT_MODEL
    family: str = DEFAULT_FAMILY
    db: str | None = None
    apps_dir: str | None = None
    # GKD categories (or group names) whose popup rules act whatever the subscription says (--popup-categories)
    popup_categories: list[str] = []
    # Cheaper history screenshots (PromptOptions.history_image_scale / _quality): 1 and None send them as the model
    # saw them, as each family is trained; a smaller scale costs fewer bytes and image tokens per step.
    history_scale: float = Field(default=1.0, gt=0, le=1)
    history_quality: int | None = Field(default=None, ge=1, le=95)

    @field_validator("base_url", mode="before")
    @classmethod
    def _urls(cls, value: Any) -> Any:
        """One URL, or several separated by commas or spaces (an environment variable holds one string)."""
        if isinstance(value, str):
            return [part for part in value.replace(",", " ").split() if part]
        return value

    @field_validator("popup_categories", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        """Names separated by commas (a name may hold spaces)."""
        if isinstance(value, str):
            return [part.strip() for part in value.replace("，", ",").split(",") if part.strip()]
        return value


# The environment variables of each setting, the first set one winning: MOBILE_AGENT_<NAME> unless listed here.
ENV_NAMES: dict[str, tuple[str, ...]] = {
    "device": ("MOBILE_AGENT_DEVICE", "ANDROID_SERIAL"),
    "apps_dir": ("MOBILE_AGENT_APPS", "MOBILE_AGENT_APPS_DIR"),
}


def settings_from_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The settings the environment gives, as strings (names matched ignoring case); the adb server also from
    adb's own variables (adb_from_environment)."""
    env = {name.upper(): value for name, value in (os.environ if environ is None else environ).items()}
    found: dict[str, str] = {}
    for field in Settings.model_fields:
        names = ENV_NAMES.get(field, (f"MOBILE_AGENT_{field.upper()}",))
        value = next((env[name] for name in names if name in env), None)
        if value is not None:
            found[field] = value
    adb = adb_from_environment(environ)
    if adb and "adb" not in found:
        found["adb"] = adb
    return found


def load_settings(**flags: Any) -> Settings:
    """The settings with ``flags`` on top (None and empty lists mean "not given"). ConfigError on a bad value."""
    given = {key: value for key, value in flags.items() if value is not None and value != [] and value != ()}
    layers = {**read_config_file(config_path()), **settings_from_environment()}
    try:
        return Settings(**{**layers, **given})
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "settings"
        raise ConfigError(f"setting {where}: {first['msg']}", SETTINGS_HINT) from None


__all__ = [
    "CONFIG_ENV",
    "DEFAULT_ADB",
    "DEFAULT_BASE_URL",
    "DEFAULT_FAMILY",
    "DEFAULT_MODEL",
    "Settings",
    "adb_from_environment",
    "adb_from_socket",
    "config_path",
    "load_settings",
    "read_config_file",
    "settings_from_environment",
]
