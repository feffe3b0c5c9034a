"""What the simulated phone shows: the view tree of the current screen (cached per change), the hierarchy dump and
screenshots (latency, injected faults, transition frames, black secure screens)."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mobile_agent.errors import DeviceError
from mobile_agent.sim.render.renderer import Renderer, shared_renderer
from mobile_agent.sim.world import popups, system
from mobile_agent.sim.world.base import Ctx
from mobile_agent.sim.world.launcher import LAUNCHER
from mobile_agent.sim.world.node import Node, dump_xml, set_package

if TYPE_CHECKING:
    from mobile_agent.sim.phone.phone import Phone


class ScreenshotFailed(DeviceError):
    kind = "screenshot_failed"


@dataclass
class Built:
    """One build of the current screen: its tree, a fingerprint of everything drawn, and what the chrome shows."""

    version: int
    tree: Node
    fingerprint: str
    chrome: tuple
    black: bool
    on_enter: Any
    on_typed: Any
    valid_until: float
    package: str


class Display:
    """Part of a Phone: builds the current screen after each change, dumps it and renders it."""

    def __init__(self, phone: Phone) -> None:
        self._phone = phone
        self._version = 0
        self._cache: Built | None = None
        self._renderer: Renderer | None = None
        self._last_screen: tuple[str, str] | None = None
        self._transition: tuple[str, float] | None = None  # (fingerprint before the change, monotonic start)
        self._toast: tuple[str, float] | None = None

    @property
    def status_bar_height(self) -> int:
        return round(self._phone.config.height * 0.04)

    @property
    def nav_bar_height(self) -> int:
        return round(self._phone.config.height * 0.02)

    def window_size(self) -> tuple[int, int]:
        return self._phone.config.width, self._phone.config.height

    def changed(self, screen: bool = False) -> None:
        """Something visible changed; with screen=True it is a new screen (animated, logged as a screen event)."""
        if screen and self._phone.profile.transition > 0 and self._cache is not None:
            self._transition = (self._cache.fingerprint, time.monotonic())
        self._version += 1
        if screen:
            self._record_screen()

    def _record_screen(self) -> None:
        pkg, screen = self._phone.tasks.screen_id()
        if self._last_screen != (pkg, screen):
            self._last_screen = (pkg, screen)
            self._phone.record("screen", package=pkg, screen=screen)

    def built(self) -> Built:
        """The current screen, rebuilt when something changed or a countdown on it ran out (the lock is held)."""
        cache = self._cache
        if cache is None or cache.version != self._version or time.monotonic() >= cache.valid_until:
            cache = self._build()
            self._cache = cache
        return cache

    def tree(self) -> Node:
        """The view tree of the current screen (the lock is held)."""
        return self.built().tree

    def _build(self) -> Built:
        for _ in range(8):  # a build may settle time-based state (an expired splash) and ask for another
            version = self._version
            built = self._build_once()
            if version == self._version:
                break
        return built

    def _build_once(self) -> Built:
        phone = self._phone
        tasks, launcher = phone.tasks, phone.packages.launcher
        task = tasks.front
        if not phone.screen_on:
            ctx = Ctx(phone, launcher, tasks.running[LAUNCHER])
            tree, package = system.screen_off(ctx), "com.android.systemui"
        elif phone.locked:
            ctx = Ctx(phone, launcher, tasks.running[LAUNCHER])
            tree, package = system.lockscreen(ctx), "com.android.systemui"
        elif tasks.showing_recents:
            ctx = Ctx(phone, launcher, tasks.running[LAUNCHER])
            tree, package = system.recents(ctx), LAUNCHER
        else:
            app = phone.packages.app(task.package)
            ctx = Ctx(phone, app, task)
            tree = app.build(ctx)
            package = task.package
            if task.popups:
                popups.add_overlay(phone, task, ctx, tree)
        set_package(tree, package)
        toast = self._toast
        if toast is not None:
            if time.monotonic() < toast[1]:
                ctx.expire_at(toast[1])
            else:
                self._toast = toast = None
        keyboard_shown = phone.input.keyboard_shown
        chrome = (
            phone.config.clock,
            phone.battery_level,
            phone.settings.wifi_on,
            phone.settings.dark_mode,
            phone.screen_on,
            phone.input.keyboard_top() if keyboard_shown else None,
            phone.settings.ime_current() if keyboard_shown else None,
            toast[0] if toast else None,
            ctx.secure,
            tasks.foreground == LAUNCHER and not tasks.showing_recents,
        )
        digest = hashlib.blake2b(repr((tree.signature(), chrome)).encode(), digest_size=12).hexdigest()
        return Built(
            self._version,
            tree,
            digest,
            chrome,
            ctx.secure or not phone.screen_on,
            ctx.on_enter,
            ctx.on_typed,
            ctx.valid_until,
            package,
        )

    def show_toast(self, text: str, seconds: float = 2.0) -> None:
        with self._phone.lock:
            self._toast = (text, time.monotonic() + seconds)
            self._phone.record("toast", text=text)
            self.changed()

    def animating_for(self) -> float:
        """Seconds until the current screen change stops animating (0 when the screen is idle)."""
        with self._phone.lock:
            if self._transition is None:
                return 0.0
            _, started = self._transition
            return max(0.0, started + self._phone.profile.transition - time.monotonic())

    def wait_for_idle(self, timeout: float) -> bool:
        """What UiDevice.waitForIdle tells: block until no screen change animates, at most ``timeout`` seconds;
        True when the screen is idle."""
        end = time.monotonic() + max(0.0, timeout)
        while (left := self.animating_for()) > 0:
            remaining = end - time.monotonic()
            if remaining <= 0:
                return False
            time.sleep(min(left, remaining) + 0.001)
        return True

    def hierarchy_xml(self, max_depth: int = 50) -> str:
        phone = self._phone
        if phone.profile.hierarchy:
            time.sleep(phone.profile.hierarchy)
        with phone.lock:
            return dump_xml(self.tree(), rotation=phone.orientation, max_depth=max_depth)

    @property
    def renderer(self) -> Renderer:
        if self._renderer is None:
            self._renderer = shared_renderer(self._phone.config.width, self._phone.config.height, self)
        return self._renderer

    def screenshot(self, fmt: str = "png", quality: int = 80, scale: float = 1.0) -> bytes:
        phone = self._phone
        if phone.faults.screenshot_fail:
            raise ScreenshotFailed("screenshot failed (injected fault)")
        delay = (
            phone.profile.screencap_png if fmt == "png" else phone.profile.u2_screenshot
        ) + phone.faults.screenshot_delay
        _sleep_while_faulty(phone, delay)
        with phone.lock:
            built = self.built()
            frame = None
            if self._transition is not None:
                old_fp, started = self._transition
                transition = phone.profile.transition
                progress = (time.monotonic() - started) / transition if transition else 1
                if progress >= 1 or old_fp == built.fingerprint:
                    self._transition = None
                else:
                    frame = (old_fp, min(3, int(progress * 4)))  # quantised: at most 3 intermediate frames
        return self.renderer.encode(built, fmt, quality=quality, scale=scale, transition=frame)


def _sleep_while_faulty(phone: Phone, delay: float) -> None:
    """Sleep ``delay`` seconds; while an injected delay is part of it, in slices, so clearing
    ``faults.screenshot_delay`` frees a frame that hangs (a test's cleanup must not wait out a day-long fault)."""
    if delay <= 0:
        return
    if phone.faults.screenshot_delay <= 0:
        time.sleep(delay)
        return
    end = time.monotonic() + delay
    while phone.faults.screenshot_delay > 0 and (left := end - time.monotonic()) > 0:
        time.sleep(min(left, 0.05))
