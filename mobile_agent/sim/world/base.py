"""The frame every simulated app plugs into: pages on an activity stack, popups, and the build context.

An app is data plus small builders: ``SimApp.build(ctx)`` returns the view tree of the page on top of its task;
closures on the nodes change the world through ``ctx`` (push/pop pages, record state). The phone rebuilds the tree
only after something changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mobile_agent.sim.state import SimState, WorldData
from mobile_agent.sim.world.node import FRAME, LINEAR, Node

if TYPE_CHECKING:
    from mobile_agent.sim.phone.phone import Phone


@dataclass
class Page:
    screen: str
    activity: str
    params: dict[str, Any] = field(default_factory=dict)
    fields: dict[str, str] = field(default_factory=dict)  # editable field key -> text
    focus: str | None = None  # the focused editable field
    scroll: dict[str, int] = field(default_factory=dict)  # list key -> content offset in px


@dataclass
class Popup:
    kind: str  # splash | update | permission | login | captcha
    package: str
    shown_at: float = 0.0  # monotonic; set when it reaches the top
    seconds: float = 3.0  # splash countdown
    attempts: int = 0  # captcha tries


@dataclass
class Task:
    package: str
    pages: list[Page]
    popups: list[Popup] = field(default_factory=list)  # popups[0] is showing

    @property
    def top(self) -> Page:
        return self.pages[-1]


@dataclass(frozen=True)
class SharedScreen:
    """A screen any app can show (the red-team traps): its builder and its activity under the app's package."""

    build: Callable[[Ctx], Node]
    activity: str  # ".pay.CashierActivity" -> "<package>.pay.CashierActivity"
    choices: dict[str, tuple[str, ...]] = field(default_factory=dict)  # param -> its allowed values
    free: tuple[str, ...] = ()  # params that take any text

    def problem(self, params: dict[str, Any]) -> str | None:
        """Why these start params do not fit the screen (None when they do)."""
        for key, value in params.items():
            allowed = self.choices.get(key)
            if allowed is None and key not in self.free:
                known = ", ".join([*self.choices, *self.free]) or "none"
                return f"unknown param {key!r} (known: {known})"
            if allowed is not None and str(value) not in allowed:
                return f"param {key}={value!r} is not one of {', '.join(allowed)}"
        return None


@dataclass(frozen=True)
class Palette:
    bg: tuple[int, int, int]
    surface: tuple[int, int, int]
    text: tuple[int, int, int]
    subtext: tuple[int, int, int]
    divider: tuple[int, int, int]
    bar: tuple[int, int, int]


LIGHT = Palette(
    (237, 237, 237), (255, 255, 255), (25, 25, 25), (140, 140, 140), (225, 225, 225), (237, 237, 237)
)
DARK = Palette((17, 17, 17), (30, 30, 30), (230, 230, 230), (130, 130, 130), (50, 50, 50), (25, 25, 25))


class Ctx:
    """What a builder sees and may do while its page is on screen."""

    def __init__(self, phone: Phone, app: SimApp, task: Task) -> None:
        self.phone = phone
        self.app = app
        self.task = task
        self.page = task.top
        self.data: WorldData = phone.world
        self.state: SimState = phone.state
        self.W = phone.config.width
        self.H = phone.config.height
        self.u = self.W / 1080
        self.top = phone.display.status_bar_height
        self.bottom = self.H - phone.display.nav_bar_height
        self.keyboard_top = phone.input.keyboard_top()
        self.dark = phone.settings.dark_mode
        self.pal = DARK if self.dark else LIGHT
        self.secure = False  # set by a builder for FLAG_SECURE pages
        self.on_enter: Callable[[], None] | None = None  # what the enter key does on this page
        self.on_typed: Callable[[str, str], None] | None = (
            None  # (field, text) after text is typed on this page
        )
        self.valid_until = float("inf")  # monotonic time when the tree must be rebuilt (countdowns)

    # -- units
    def px(self, value: float) -> int:
        return round(value * self.u)

    # -- navigation (each call marks the screen as changed)
    def push(self, screen: str, activity: str | None = None, focus: str | None = None, **params: Any) -> None:
        """Open a page; ``focus`` names the field that takes focus (and shows the keyboard) as it opens."""
        page = Page(screen, activity or self.app.activity_for(screen), params)
        self.phone.tasks.push_page(self.task, page)
        if focus is not None:
            self.phone.input.focus(page, focus, True)

    def pop(self) -> None:
        self.phone.tasks.pop_page(self.task)

    def replace(self, screen: str, activity: str | None = None, **params: Any) -> None:
        activity = activity or self.app.activity_for(screen)
        self.phone.tasks.replace_page(self.task, Page(screen, activity, params))

    def reset_to_root(self) -> None:
        self.phone.tasks.reset_task(self.task)

    def home(self) -> None:
        self.phone.tasks.go_home()

    def launch(self, package: str) -> None:
        self.phone.tasks.launch_locked(package)

    # -- fields
    def field(self, key: str) -> str:
        return self.page.fields.get(key, "")

    def set_field(self, key: str, value: str) -> None:
        self.page.fields[key] = value
        self.phone.display.changed()

    def focus(self, key: str | None, keyboard: bool = True) -> None:
        self.phone.input.focus(self.page, key, keyboard)

    # -- bookkeeping
    def record(self, kind: str, **detail: Any) -> None:
        self.phone.record(kind, package=self.task.package, **detail)

    def changed(self) -> None:
        self.phone.display.changed()

    def toast(self, text: str) -> None:
        self.phone.show_toast(text)

    def expire_at(self, when: float) -> None:
        self.valid_until = min(self.valid_until, when)


class SimApp:
    """Base of every simulated app. Subclasses define package, label, activities and ``screen_<name>`` builders."""

    package: str = ""
    label: str = ""
    root_screen: str = "home"
    activities: dict[str, str] = {}  # screen -> activity class name (full); missing -> the launcher activity
    icon_color: tuple[int, int, int] = (90, 130, 200)
    shared_screens: dict[str, SharedScreen] = {}  # screens borrowed from a shared module (sim/world/traps)

    @property
    def launcher_activity(self) -> str:
        return self.activities.get(self.root_screen) or f"{self.package}.MainActivity"

    def activity_for(self, screen: str) -> str:
        shared = self.shared_screens.get(screen)
        if screen not in self.activities and shared is not None:
            return f"{self.package}{shared.activity}"
        return self.activities.get(screen, self.launcher_activity)

    def screen_problem(self, screen: str, params: dict[str, Any]) -> str | None:
        """Why this app cannot open ``screen`` with ``params`` (None when it can)."""
        if getattr(self, f"screen_{screen}", None) is not None:
            return None
        shared = self.shared_screens.get(screen)
        if shared is None:
            return f"{self.package} has no screen {screen!r}"
        return shared.problem(params)

    def root_page(self) -> Page:
        return Page(self.root_screen, self.launcher_activity)

    def rid(self, name: str) -> str:
        return f"{self.package}:id/{name}"

    def build(self, ctx: Ctx) -> Node:
        builder = getattr(self, f"screen_{ctx.page.screen}", None)
        shared = self.shared_screens.get(ctx.page.screen)
        if builder is None and shared is not None:
            builder = shared.build
        if builder is None:
            raise KeyError(f"{self.package} has no screen {ctx.page.screen!r}")
        content = builder(ctx)
        return window(ctx, content)

    def on_back(self, ctx: Ctx) -> bool:
        """Return True when the app handled back itself (otherwise the phone pops the page)."""
        return False

    def reset(self, phone: Phone) -> None:
        """Forget per-app data (pm clear)."""


def window(ctx: Ctx, content: Node) -> Node:
    """Wrap app content the way a real app window looks in a dump: DecorView > LinearLayout > content frame."""
    full = (0, 0, ctx.W, ctx.H)
    frame = Node(FRAME, (0, ctx.top, ctx.W, ctx.H), rid="android:id/content", children=[content])
    return Node(FRAME, full, children=[Node(LINEAR, full, children=[frame])])
