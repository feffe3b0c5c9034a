"""Task files: what a batch runs. YAML or JSONL; every error names the file and the line.

YAML — a list of tasks, or a mapping with ``defaults`` and ``tasks``::

    defaults: {family: ui-venus-2, max_steps: 30, timeout: 300}
    tasks:
      - 打开设置                                  # a bare string is a task with the defaults
      - task: 给张三发微信说晚上好
        app: 微信
        repeats: 3
        requires: {vendor: xiaomi, apps: [com.tencent.mm]}   # or a list: [vendor:xiaomi, apps:com.tencent.mm]
        priority: 10
        reset: clear                              # none | home | force-stop | clear (before each episode)
        check: {app: com.tencent.mm, state: {messages_sent: {contains: {contact: 张三}}}}
        safety: {allow: [send@com.tencent.mm]}    # like --policy/--allow/--deny, on top of the run's policy

JSONL — one task object (or string) per line; blank lines and lines starting with ``#`` are skipped.

    specs = load_tasks("tasks.yaml")
    queue_rows = expand(specs)      # one NewTask per repeat, in file order
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from mobile_agent.errors import ConfigError

TASKS_HINT = "see examples/tasks.yaml for the task file format"
SAFETY_HINT = (
    "safety takes the words of --policy/--allow/--deny, e.g. {allow: [send@com.tencent.mm], deny: [pay]}; "
    "kinds: pay transfer order delete send post call sensitive; actions: ask deny allow"
)
PACKAGE_NAME = re.compile(r"[A-Za-z][\w]*(\.[A-Za-z_][\w]*)+")  # com.example.app: launched by package
YAML_SUFFIXES = (".yaml", ".yml")
JSONL_SUFFIXES = (".jsonl", ".ndjson")


class ResetMode(str, Enum):
    """What to do to a phone before each episode."""

    NONE = "none"
    HOME = "home"  # press home
    FORCE_STOP = "force-stop"  # force-stop the task's app, then home
    CLEAR = "clear"  # clear the task's app data, then home

    def __str__(self) -> str:
        return self.value


def normalize_tags(value: Any) -> tuple[str, ...]:
    """Tags or requirements as sorted ``key:value`` / ``word`` strings.

    ``{vendor: Xiaomi, apps: [a, b]}`` -> ``("apps:a", "apps:b", "vendor:xiaomi")``; ``[fast, "android:13"]`` is kept
    as written (lower-cased). Values are compared case-insensitively; package names are lower-case anyway.
    """
    if value is None:
        return ()
    out: set[str] = set()
    if isinstance(value, Mapping):
        for key, item in value.items():
            items = item if isinstance(item, (list, tuple, set)) else [item]
            for one in items:
                if one is None or isinstance(one, (dict, list)):
                    raise ValueError(f"tag {key!r} must be a word or a list of words")
                if isinstance(one, bool):
                    one = "yes" if one else "no"
                out.add(f"{str(key).strip().lower()}:{str(one).strip().lower()}")
    elif isinstance(value, (list, tuple, set)):
        for one in value:
            if not isinstance(one, (str, int, float)) or isinstance(one, bool):
                raise ValueError(f"a tag must be a word like 'vendor:xiaomi', got {one!r}")
            out.add(str(one).strip().lower())
    elif isinstance(value, str):
        out.add(value.strip().lower())
    else:
        raise ValueError(f"tags must be a mapping or a list, got {type(value).__name__}")
    return tuple(sorted(tag for tag in out if tag))


class TaskSafety(BaseModel):
    """A task's own safety words, the same as the command-line options: ``policy`` (ask|deny|allow, KIND=ACTION,
    KIND@APP=ACTION), ``allow`` and ``deny`` (KIND, KIND@APP). They are layered on top of the run's policy."""

    model_config = ConfigDict(extra="forbid")

    policy: list[str] = []
    allow: list[str] = []
    deny: list[str] = []

    @field_validator("policy", "allow", "deny", mode="before")
    @classmethod
    def _words(cls, value: Any) -> list[str]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
            raise ValueError("expected a word like send@com.tencent.mm or a list of them")
        return items

    @model_validator(mode="after")
    def _parses(self) -> TaskSafety:
        from mobile_agent.errors import UserError
        from mobile_agent.gate.policy import parse_policy

        try:
            parse_policy(self.policy, allow=self.allow, deny=self.deny)
        except UserError as exc:
            raise ValueError(exc.message) from None
        return self


class TaskSpec(BaseModel):
    """One entry of a task file."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    task: str = Field(min_length=1)
    id: str | None = None
    app: str | None = None
    family: str | None = None
    model: str | None = Field(default=None, min_length=1)
    max_steps: int | None = Field(default=None, ge=1, le=1000)
    timeout: float | None = Field(default=None, gt=0, description="seconds per episode")
    repeats: int = Field(default=1, ge=1, le=10_000)
    requires: tuple[str, ...] = ()
    priority: int = 0
    reset: ResetMode | None = None
    check: dict[str, Any] | None = None
    safety: TaskSafety | None = None

    @field_validator("safety", mode="before")
    @classmethod
    def _safety(cls, value: Any) -> Any:
        return {"policy": value} if isinstance(value, (str, list)) else value

    @field_validator("repeats", "max_steps", "timeout", "priority", mode="before")
    @classmethod
    def _not_a_bool(cls, value: Any) -> Any:
        if isinstance(value, bool):  # YAML's true/yes would pass as 1
            raise ValueError(f"expected a number, got {str(value).lower()}")
        return value

    @field_validator("family")
    @classmethod
    def _family(cls, value: str | None) -> str | None:
        from mobile_agent.model.families import FAMILIES

        if value is not None and value.strip().lower() not in FAMILIES:
            raise ValueError(f"unknown model family {value!r}")
        return value.strip().lower() if value is not None else None

    @field_validator("task")
    @classmethod
    def _task_text(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("the task text is empty")
        return value

    @field_validator("requires", mode="before")
    @classmethod
    def _requires(cls, value: Any) -> tuple[str, ...]:
        return normalize_tags(value)


@dataclass(frozen=True)
class LoadedTask:
    """A task spec and where it was written."""

    spec: TaskSpec
    path: str
    line: int
    app_line: int | None = None  # where its ``app`` is written (in the task or in the defaults)

    @property
    def where(self) -> str:
        return f"{Path(self.path).name}:{self.line}"


DEFAULT_KEYS = set(TaskSpec.model_fields) - {"task", "id"}


def load_tasks(path: str | Path, *, registry: Any = None) -> list[LoadedTask]:
    """Read a YAML or JSONL task file and validate it whole: keys, family, model, app names (against ``registry``,
    default the shipped manifests plus MOBILE_AGENT_APPS), checks, safety words. ConfigError with file:line on the
    first problem, before any phone is touched."""
    path = Path(path)
    shown = str(path)
    if not path.is_file():
        raise ConfigError("task file not found", "pass the path of a .yaml or .jsonl task file", path=shown)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text ({exc.reason})", "save the file as UTF-8", path=shown) from None
    if path.suffix.lower() in JSONL_SUFFIXES:
        tasks = parse_jsonl(text, shown)
    elif path.suffix.lower() in YAML_SUFFIXES:
        tasks = parse_yaml_tasks(text, shown)
    else:
        raise ConfigError(
            f"unknown task file type {path.suffix or '(none)'!r}", "name it .yaml, .yml or .jsonl", path=shown
        )
    if not tasks:
        raise ConfigError("the task file has no tasks", TASKS_HINT, path=shown, line=1)
    check_apps(tasks, registry)
    return tasks


def check_apps(tasks: list[LoadedTask], registry: Any = None) -> None:
    """Every task's ``app`` names a known app (a manifest's name or alias) or is a package name; ConfigError with
    the manifests' closest names otherwise."""
    named = [loaded for loaded in tasks if loaded.spec.app]
    if not named:
        return
    if registry is None:
        from mobile_agent.apps.registry import load_registry

        registry = load_registry()
    for loaded in named:
        app = loaded.spec.app or ""
        if registry.lookup(app) is not None or PACKAGE_NAME.fullmatch(app.strip()):
            continue
        close = registry.suggestions(app)
        raise ConfigError(
            f"unknown app {app!r}" + (f" (did you mean {' / '.join(close)}?)" if close else ""),
            "use an app name from `mobile-agent apps list`, a package name (com.example.app), "
            "or add a manifest with --apps-dir",
            path=loaded.path,
            line=loaded.app_line or loaded.line,
        )


def parse_jsonl(text: str, path: str = "<string>") -> list[LoadedTask]:
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"invalid JSON: {exc.msg} (column {exc.colno})",
                "each line must be one JSON object",
                path=path,
                line=number,
            ) from None
        out.append(_spec(data, {}, path, number, {(): number}, {}))
    return out


def parse_yaml_tasks(text: str, path: str = "<string>") -> list[LoadedTask]:
    from mobile_agent.apps.yamlsrc import parse_yaml

    doc = parse_yaml(text, path)
    data = doc.data
    if data is None:
        return []
    defaults: dict[str, Any] = {}
    prefix: tuple[Any, ...] = ()
    if isinstance(data, dict):
        unknown = set(data) - {"defaults", "tasks"}
        if unknown:
            key = sorted(map(str, unknown))[0]
            raise ConfigError(
                f"unknown key {key!r} at the top of the task file",
                "the top level holds 'defaults' and 'tasks' (or is a plain list of tasks)",
                path=path,
                line=doc.line_of((key,)),
            )
        defaults = data.get("defaults") or {}
        if not isinstance(defaults, dict):
            raise ConfigError(
                "'defaults' must be a mapping", TASKS_HINT, path=path, line=doc.line_of(("defaults",))
            )
        bad = set(defaults) - DEFAULT_KEYS
        if bad:
            key = sorted(map(str, bad))[0]
            raise ConfigError(
                f"unknown default {key!r}",
                f"defaults may set: {', '.join(sorted(DEFAULT_KEYS))}",
                path=path,
                line=doc.line_of(("defaults", key)),
            )
        prefix = ("tasks",)
        data = data.get("tasks")
        if data is None:
            return []
    if not isinstance(data, list):
        raise ConfigError("expected a list of tasks", TASKS_HINT, path=path, line=doc.line_of(prefix))
    # Each task's own lines, grouped in one pass over the document's (one pass per task was quadratic: 10,000
    # tasks took 79 s to check).
    per_item: dict[Any, dict[tuple[Any, ...], int]] = {}
    cut = len(prefix)
    for loc, line in doc.lines.items():
        if len(loc) > cut and loc[:cut] == prefix:
            per_item.setdefault(loc[cut], {})[loc[cut + 1 :]] = line
    default_lines = {key: doc.line_of(("defaults", key)) for key in defaults}
    out = []
    for index, item in enumerate(data):
        item_lines = per_item.get(index, {})
        out.append(_spec(item, defaults, path, item_lines.get((), 1), item_lines, default_lines))
    return out


def _spec(
    data: Any,
    defaults: Mapping[str, Any],
    path: str,
    line: int,
    lines: Mapping[tuple[Any, ...], int],
    default_lines: Mapping[str, int],
) -> LoadedTask:
    if isinstance(data, str):
        data = {"task": data}
    if not isinstance(data, dict):
        raise ConfigError(
            f"a task must be a string or a mapping with a 'task' key, got {type(data).__name__}",
            TASKS_HINT,
            path=path,
            line=line,
        )
    merged = {**defaults, **data}
    try:
        spec = TaskSpec.model_validate(merged)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        loc = tuple(first["loc"])
        field = ".".join(str(part) for part in loc) or "task"
        if loc[:1] and loc[0] in data:
            where = _line_of(lines, loc, line)
        else:  # a value the task takes from the defaults is wrong where the defaults say it
            where = default_lines.get(str(loc[0]), line) if loc[:1] else line
        if first["type"] == "extra_forbidden":
            message = f"unknown key {field!r}"
            hint = f"a task may have: {', '.join(TaskSpec.model_fields)}"
        elif first["type"] == "missing":
            message = f"missing required key {field!r}"
            hint = "every task needs its text under 'task'"
        else:
            message = f"{field}: {first['msg'].removeprefix('Value error, ')}"
            hint = SAFETY_HINT if loc[:1] == ("safety",) else TASKS_HINT
            if loc[:1] == ("family",):
                from mobile_agent.model.families import FAMILIES

                hint = f"valid families: {', '.join(FAMILIES)}"
        raise ConfigError(message, hint, path=path, line=where) from None
    if spec.check is not None:
        check_line = (
            _line_of(lines, ("check",), line) if "check" in data else default_lines.get("check", line)
        )
        _validate_check(spec.check, path, check_line)
    app_line = _line_of(lines, ("app",), line) if "app" in data else default_lines.get("app")
    return LoadedTask(spec, path, line, app_line)


def _line_of(lines: Mapping[tuple[Any, ...], int], loc: tuple[Any, ...], fallback: int) -> int:
    for end in range(len(loc), 0, -1):
        found = lines.get(tuple(loc[:end]))
        if found is not None:
            return found
    return fallback


def _validate_check(check: dict[str, Any], path: str, line: int) -> None:
    """Validate with verification's schema when it is installed; otherwise the check is kept as written."""
    try:
        from mobile_agent.verify.checks import TaskCheck
    except ImportError:
        return
    TaskCheck.parse(check, path=path, line=line)


@dataclass(frozen=True)
class ExpandedTask:
    """One queue entry: a task spec at one repeat."""

    seq: int
    label: str
    spec: TaskSpec
    repeat: int

    def queue_spec(self) -> dict[str, Any]:
        """What a worker needs to run it (stored with the queue row)."""
        data = self.spec.model_dump(
            mode="json", exclude={"repeats", "requires", "priority"}, exclude_none=True
        )
        data["repeat"] = self.repeat
        return data


def expand(tasks: list[LoadedTask]) -> list[ExpandedTask]:
    """Every task times its repeats, numbered in file order. The numbering makes a re-submit idempotent."""
    out = []
    for loaded in tasks:
        for repeat in range(loaded.spec.repeats):
            suffix = f" #{repeat + 1}" if loaded.spec.repeats > 1 else ""
            out.append(ExpandedTask(len(out), f"{loaded.where}{suffix}", loaded.spec, repeat))
    return out


def to_new_tasks(tasks: list[LoadedTask]) -> list[Any]:
    """The queue rows for a task file (``mobile_agent.store.queue.NewTask``)."""
    from mobile_agent.store.queue import NewTask

    return [
        NewTask(
            seq=item.seq,
            label=item.label,
            task=item.spec.task,
            app=item.spec.app,
            spec=item.queue_spec(),
            priority=item.spec.priority,
            requires=item.spec.requires,
        )
        for item in expand(tasks)
    ]


__all__ = [
    "PACKAGE_NAME",
    "ExpandedTask",
    "LoadedTask",
    "ResetMode",
    "TaskSafety",
    "TaskSpec",
    "check_apps",
    "expand",
    "load_tasks",
    "normalize_tags",
    "parse_jsonl",
    "parse_yaml_tasks",
    "to_new_tasks",
]
