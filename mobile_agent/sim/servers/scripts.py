"""The simulated model's scripts: one YAML file per task (``mobile_agent/sim/scripts/*.yaml``), each a list of
turns the model answers in order, one per request of an episode.

    task: 给张三发微信说晚上好          # the script answers a request whose text contains this
    scenario: wechat_send              # the scenario it was written for (tests pair them)
    turns:
      - think: 先打开微信
        action: {kind: launch, app: 微信}
      - action: {kind: tap, point: [481, 122]}   # points are 0-999, normalised to the screenshot
      - malformed: "Clikc(1, 2)"                 # faults: malformed, http_error, delay_ms, hang, trickle_ms

A file or key that is wrong is a ConfigError naming the file and line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from mobile_agent.actions import Action, ActionKind
from mobile_agent.apps.yamlsrc import compose_yaml
from mobile_agent.errors import ConfigError

SHIPPED_SCRIPTS = Path(__file__).parents[1] / "scripts"  # mobile_agent/sim/scripts
SCRIPT_KEYS = ("task", "scenario", "turns")
TURN_KEYS = ("think", "action", "malformed", "http_error", "delay_ms", "hang", "trickle_ms")
ACTION_KEYS = ("kind", "point", "end", "text", "app", "key", "duration_ms", "sensitive")


@dataclass(frozen=True)
class Turn:
    action: Action | None = None
    think: str = ""
    malformed: str | None = None
    http_error: int | None = None
    delay_ms: int = 0
    hang: bool = False
    trickle_ms: int = 0
    line: int = 0


@dataclass(frozen=True)
class Script:
    task: str
    turns: tuple[Turn, ...]
    scenario: str | None = None
    path: str = ""


def _error(message: str, path: Path, node: yaml.Node | None, hint: str | None = None) -> ConfigError:
    line = node.start_mark.line + 1 if node is not None else None
    return ConfigError(
        message,
        hint or "see the script format in mobile_agent/sim/servers/scripts.py",
        path=str(path),
        line=line,
    )


def _mapping(node: yaml.Node, path: Path, what: str, allowed: Sequence[str]) -> dict[str, yaml.Node]:
    if not isinstance(node, yaml.MappingNode):
        raise _error(f"{what} must be a mapping", path, node)
    out: dict[str, yaml.Node] = {}
    for key_node, value_node in node.value:
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
        if key not in allowed:
            raise _error(
                f"unknown key {key!r} in {what}", path, key_node, hint=f"allowed keys: {', '.join(allowed)}"
            )
        if key in out:
            raise _error(f"duplicate key {key!r} in {what}", path, key_node)
        out[key] = value_node
    return out


def _point(value: Any, path: Path, node: yaml.Node, name: str) -> list[int]:
    ok = (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 999 for v in value)
    )
    if not ok:
        raise _error(f"{name} must be [x, y] with integers 0-999 (normalised to the screenshot)", path, node)
    return value


def _action(node: yaml.Node, value: Any, path: Path) -> Action:
    fields = _mapping(node, path, "action", ACTION_KEYS)
    if "kind" not in fields:
        raise _error(
            "action needs a kind", path, node, hint=f"kinds: {', '.join(k.value for k in ActionKind)}"
        )
    for name in ("point", "end"):
        if name in fields:
            _point(value[name], path, fields[name], name)
    try:
        return Action.from_dict(value)
    except ValueError as exc:
        raise _error(f"bad action: {exc}", path, node) from None


def _turn(node: yaml.Node, value: Any, path: Path) -> Turn:
    fields = _mapping(node, path, "turn", TURN_KEYS)
    outcomes = [k for k in ("action", "malformed", "http_error") if k in fields]
    if len(outcomes) != 1:
        raise _error("a turn needs exactly one of action, malformed or http_error", path, node)
    turn = Turn(line=node.start_mark.line + 1)
    if "think" in fields:
        if not isinstance(value["think"], str):
            raise _error("think must be text", path, fields["think"])
        turn = replace(turn, think=value["think"])
    if "delay_ms" in fields:
        delay = value["delay_ms"]
        if not isinstance(delay, int) or isinstance(delay, bool) or not 0 <= delay <= 600_000:
            raise _error("delay_ms must be an integer 0-600000", path, fields["delay_ms"])
        turn = replace(turn, delay_ms=delay)
    if "hang" in fields:
        if not isinstance(value["hang"], bool):
            raise _error("hang must be true or false", path, fields["hang"])
        turn = replace(turn, hang=value["hang"])
    if "trickle_ms" in fields:
        gap = value["trickle_ms"]
        if not isinstance(gap, int) or isinstance(gap, bool) or not 1 <= gap <= 600_000:
            raise _error("trickle_ms must be an integer 1-600000", path, fields["trickle_ms"])
        turn = replace(turn, trickle_ms=gap)
    if "action" in fields:
        return replace(turn, action=_action(fields["action"], value["action"], path))
    if "malformed" in fields:
        if not isinstance(value["malformed"], str):
            raise _error("malformed must be the raw reply text", path, fields["malformed"])
        return replace(turn, malformed=value["malformed"])
    status = value["http_error"]
    if not isinstance(status, int) or isinstance(status, bool) or not 400 <= status <= 599:
        raise _error("http_error must be an HTTP status 400-599", path, fields["http_error"])
    return replace(turn, http_error=status)


def load_script(path: Path) -> Script:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"cannot read the script: {exc}", "check the path and that it is UTF-8", path=str(path)
        ) from None
    loader, node = compose_yaml(text, str(path))  # bounded: size, depth, aliases
    try:
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(
            f"not valid YAML: {problem}", "fix the YAML syntax", path=str(path), line=line
        ) from None
    finally:
        loader.dispose()
    if node is None:
        raise ConfigError("the script is empty", "a script needs task and turns", path=str(path), line=1)
    fields = _mapping(node, path, "the script", SCRIPT_KEYS)
    for required in ("task", "turns"):
        if required not in fields:
            raise _error(f"the script needs {required}", path, node)
    task = data["task"]
    if not isinstance(task, str) or not task.strip():
        raise _error("task must be the non-empty task text", path, fields["task"])
    scenario = data.get("scenario")
    if scenario is not None and not isinstance(scenario, str):
        raise _error("scenario must be a name", path, fields["scenario"])
    turns_node = fields["turns"]
    if not isinstance(turns_node, yaml.SequenceNode) or not turns_node.value:
        raise _error("turns must be a non-empty list", path, turns_node)
    turns = tuple(_turn(n, v, path) for n, v in zip(turns_node.value, data["turns"], strict=True))
    return Script(task=task.strip(), turns=turns, scenario=scenario, path=str(path))


def load_scripts(paths: Path | str | Iterable[Path | str]) -> list[Script]:
    """Load script files (a folder means its ``*.yaml`` files). ConfigError names the file and line."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    scripts: list[Script] = []
    seen: dict[str, str] = {}
    for item in paths:
        path = Path(item)
        if path.is_dir():
            files = sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml"))
            if not files:  # a model that knows no task would answer nothing, forever
                raise ConfigError(
                    "the folder holds no *.yaml scripts",
                    "pass a script file or a folder of them",
                    path=str(path),
                )
        elif path.exists():
            files = [path]
        else:
            raise ConfigError("no such script file or folder", "check the --scripts path", path=str(path))
        for file in files:
            script = load_script(file)
            if script.task in seen:
                raise ConfigError(
                    f"task {script.task!r} is already scripted in {seen[script.task]}",
                    "one script per task text",
                    path=str(file),
                )
            seen[script.task] = str(file)
            scripts.append(script)
    return scripts


__all__ = ["SHIPPED_SCRIPTS", "Script", "Turn", "load_script", "load_scripts"]
