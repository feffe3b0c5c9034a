"""Scenarios: how a simulated phone starts (app, popups, seed data, removed packages) and what a task must leave
behind, as a declarative check of the phone's final state.

    s = load_scenario("wechat_send")            # a shipped name, or a path to a YAML file
    phone = Phone(scenario=s)                   # or phone.apply_scenario(s)
    ... run the task ...
    s.check(phone)  -> CheckResult(ok=True, detail="✓ messages_sent contains {contact: 张三, text: 晚上好}")

The check lines are in the check language of mobile_agent.verify.checklang; ``phone_state`` is the snapshot of a
simulated phone they are evaluated on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator

from mobile_agent.apps.yamlsrc import compose_yaml
from mobile_agent.errors import ConfigError, UserError
from mobile_agent.sim.state import Dish, Shop, SimState, WorldData
from mobile_agent.sim.world.base import Page
from mobile_agent.sim.world.popups import KINDS as POPUP_KINDS
from mobile_agent.verify.checklang import Check, evaluate_check, parse_check

if TYPE_CHECKING:
    from mobile_agent.sim.phone.phone import Phone

SCENARIO_DIR = Path(__file__).parent / "scenarios"
OUTCOMES = ("finished", "answered", "needs_user", "blocked", "max_steps", "loop")


# ---------------------------------------------------------------------- the file format
class PopupSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: str
    seconds: float = Field(3.0, gt=0, le=30)

    @field_validator("kind")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in POPUP_KINDS:
            raise ValueError(f"unknown popup {value!r}; choose one of {', '.join(POPUP_KINDS)}")
        return value


class DishSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    price: float = Field(gt=0)


class ShopSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    dishes: list[DishSpec] = Field(min_length=1)
    rating: float = 4.7
    monthly_sales: int = 1000
    keywords: list[str] = []
    delivery_fee: float = 3.0


class SeedSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    wechat_chats: dict[str, list[dict[str, str]]] | None = None
    wechat_contacts: list[str] | None = None
    shops: list[ShopSpec] | None = None
    search_history: list[str] | None = None
    alipay_contacts: list[str] | None = None
    balance: float | None = None
    address: str | None = None


class StartSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    app: str = "launcher"  # a package, or "launcher"
    screen: str | None = None  # a world screen id pushed on top of the app's root page
    params: dict[str, Any] = {}


def _valid_check(line: str) -> str:
    parse_check(line)
    return line


CheckLine = Annotated[str, AfterValidator(_valid_check)]


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str
    task: str = ""
    description: str = ""
    start: StartSpec = StartSpec()
    popups: dict[str, list[PopupSpec | str]] = {}
    seed: SeedSpec = SeedSpec()
    removed_packages: list[str] = []
    settings: dict[str, str] = {}  # "namespace/key": value, e.g. "secure/ui_night_mode": "1"
    expect_outcome: str = "finished"
    checks: list[CheckLine] = Field([], alias="check")  # the file says check:, the method is check(phone)
    source: str | None = Field(None, exclude=True)

    @field_validator("expect_outcome")
    @classmethod
    def _outcome(cls, value: str) -> str:
        if value not in OUTCOMES:
            raise ValueError(f"unknown outcome {value!r}; choose one of {', '.join(OUTCOMES)}")
        return value

    @field_validator("settings")
    @classmethod
    def _settings_keys(cls, value: dict[str, str]) -> dict[str, str]:
        for key in value:
            if key.count("/") != 1 or key.split("/")[0] not in ("global", "secure", "system"):
                raise ValueError(
                    f"setting {key!r} must look like 'global/wifi_on' (global, secure or system)"
                )
        return {k: str(v) for k, v in value.items()}

    # ------------------------------------------------------------------ use
    def popup_plan(self) -> dict[str, list[dict[str, Any]]]:
        plan = {}
        for pkg, specs in self.popups.items():
            plan[pkg] = [{"kind": s, "seconds": 3.0} if isinstance(s, str) else s.model_dump() for s in specs]
        return plan

    def world(self) -> WorldData:
        world = WorldData()
        seed = self.seed
        for name in (
            "wechat_chats",
            "wechat_contacts",
            "search_history",
            "alipay_contacts",
            "balance",
            "address",
        ):
            value = getattr(seed, name)
            if value is not None:
                setattr(world, name, value)
        if seed.shops is not None:
            world.shops = [
                Shop(
                    s.name,
                    [Dish(d.name, d.price) for d in s.dishes],
                    s.rating,
                    s.monthly_sales,
                    list(s.keywords),
                    s.delivery_fee,
                )
                for s in seed.shops
            ]
        return world

    def apply(self, phone: Phone) -> None:
        """Reset the phone's world to this scenario's start. Call with phone.lock held (Phone.apply_scenario does)."""
        phone.state = SimState()
        phone.world = self.world()
        phone.tasks.popup_plan = self.popup_plan()
        phone.packages.remove(self.removed_packages)
        phone.tasks.reset()
        phone.packages.forget_apps()
        phone.input.keyboard_shown = False
        dict.update(phone.settings, {tuple(k.split("/", 1)): v for k, v in self.settings.items()})
        phone.record("scenario", name=self.name)
        if self.start.app != "launcher":
            if not phone.packages.is_installed(self.start.app):
                raise ConfigError(
                    f"scenario {self.name!r} starts in {self.start.app!r}, which is not installed",
                    "start.app must be an installed package or 'launcher'",
                    path=self.source,
                )
            phone.tasks.launch_locked(self.start.app)
            if self.start.screen:
                app = phone.packages.app(self.start.app)
                problem = app.screen_problem(self.start.screen, self.start.params)
                if problem is not None:
                    raise ConfigError(
                        f"scenario {self.name!r}: start.screen {self.start.screen!r}: {problem}",
                        "see mobile_agent/sim/world/traps.py for the shared screens and their params",
                        path=self.source,
                    )
                page = Page(self.start.screen, app.activity_for(self.start.screen), dict(self.start.params))
                phone.tasks.push_page(phone.tasks.running[self.start.app], page)

    def check(self, phone: Phone) -> CheckResult:
        """Evaluate every check line against the phone's final state."""
        lines, passed = [], 0
        state = phone_state(phone)
        for text in self.checks:
            ok, actual = evaluate_check(parse_check(text), state)
            passed += ok
            lines.append(f"{'✓' if ok else '✗'} {text}" + ("" if ok else f"  (actual: {_short(actual)})"))
        if not self.checks:
            lines.append("no checks: nothing to verify")
        total = len(self.checks)
        return CheckResult(ok=passed == total, detail="\n".join(lines), passed=passed, total=total)


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    detail: str
    passed: int = 0
    total: int = 0


# ---------------------------------------------------------------------- checks on a simulated phone
def phone_state(phone: Phone) -> dict[str, Any]:
    """Everything a check line can name, read from a simulated phone at one moment."""
    with phone.lock:
        state = phone.state.as_dict()
        state["foreground"], state["activity"] = phone.current()
        state["screen"] = phone.screen()[1]
        state["balance"] = phone.world.balance
    return state


def evaluate(check: Check, phone: Phone) -> tuple[bool, Any]:
    """``evaluate_check`` on the phone's state now."""
    return evaluate_check(check, phone_state(phone))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


# ---------------------------------------------------------------------- loading with line numbers
def _construct(node: yaml.Node, path: tuple, lines: dict[tuple, int]) -> Any:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out = {}
        for key_node, value_node in node.value:
            key = _scalar(key_node)
            lines[path + (key,)] = key_node.start_mark.line + 1
            out[key] = _construct(value_node, path + (key,), lines)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_construct(item, path + (i,), lines) for i, item in enumerate(node.value)]
    return _scalar(node)


def _scalar(node: yaml.Node) -> Any:
    return yaml.safe_load(yaml.serialize(node))


def load_yaml_with_lines(text: str, path: str) -> tuple[Any, dict[tuple, int]]:
    loader, node = compose_yaml(text, path)  # bounded: size, depth, aliases
    loader.dispose()
    lines: dict[tuple, int] = {}
    if node is None:
        return {}, lines
    return _construct(node, (), lines), lines


def _line_for(loc: tuple, lines: dict[tuple, int]) -> int | None:
    loc = tuple(p for p in loc if not (isinstance(p, str) and p in ("PopupSpec", "str")))
    while loc:
        if loc in lines:
            return lines[loc]
        loc = loc[:-1]
    return lines.get(())


def scenario_from_yaml(text: str, path: str = "<scenario>") -> Scenario:
    data, lines = load_yaml_with_lines(text, path)
    if not isinstance(data, dict):
        raise ConfigError("a scenario file must be a mapping (name:, task:, check: ...)", path=path, line=1)
    data.setdefault("name", Path(path).stem)
    try:
        scenario = Scenario.model_validate({**data, "source": path})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        raise ConfigError(
            f"{where}: {message}",
            "see mobile_agent/sim/scenarios/*.yaml for working examples",
            path=path,
            line=_line_for(tuple(first["loc"]), lines),
        ) from None
    return scenario


def list_scenarios() -> list[str]:
    return sorted(p.stem for p in SCENARIO_DIR.glob("*.yaml"))


def load_scenario(name_or_path: str | Path) -> Scenario:
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml") or candidate.exists():
        if not candidate.exists():
            raise UserError(f"scenario file {str(candidate)!r} does not exist", "check the path")
        return scenario_from_yaml(candidate.read_text(encoding="utf-8"), str(candidate))
    shipped = SCENARIO_DIR / f"{name_or_path}.yaml"
    if not shipped.exists():
        raise UserError(
            f"unknown scenario {str(name_or_path)!r}", f"choose one of: {', '.join(list_scenarios())}"
        )
    return scenario_from_yaml(shipped.read_text(encoding="utf-8"), str(shipped))


def make_scenario(**fields: Any) -> Scenario:
    """Build a scenario in code (same validation as a file)."""
    return Scenario.model_validate(fields)
