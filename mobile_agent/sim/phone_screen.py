"""What the simulated phone shows: the view tree of the current screen (cached per change), the hierarchy dump and
screenshots (latency, injected faults, transition frames, black secure screens)."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mobile_agent.errors import DeviceError
from mobile_agent.sim.phone_packages import LAUNCHER
from mobile_agent.sim.world import popups, system
from mobile_agent.sim.world.base import Ctx
from mobile_agent.sim.world.node import Node, dump_xml, set_package

if TYPE_CHECKING:
    from mobile_agent.sim.render import Renderer


class ScreenshotFailed(DeviceError):
    kind = "screenshot_failed"


class ScreenMixin:
    """Part of Phone: builds the current screen and renders it."""

    @property
    def status_bar_height(self) -> int:
        return round(self.config.height * 0.04)

    @property
    def nav_bar_height(self) -> int:
        return round(self.config.height * 0.02)

    def window_size(self) -> tuple[int, int]:
        return self.config.width, self.config.height

    def _changed(self, screen: bool = False) -> None:
        """Something visible changed; with screen=True it is a new screen (animated, logged as a screen event)."""
        if screen and self.profile.transition > 0 and self._cache is not None:
            self._transition = (self._cache.fingerprint, time.monotonic())
        self._version += 1
        if screen:
            self._record_screen()

    def _record_screen(self) -> None:
        pkg, screen = self._screen_unlocked()
        if self._last_screen != (pkg, screen):
            self._last_screen = (pkg, screen)
            self._record("screen", package=pkg, screen=screen)

    def _built(self) -> _Built:
        cache = self._cache
        if cache is None or cache.version != self._version or time.monotonic() >= cache.valid_until:
            cache = self._build()
            self._cache = cache
        return cache

    def _tree(self) -> Node:
        return self._built().tree

    def _build(self) -> _Built:
        for _ in range(8):  # a build may settle time-based state (an expired splash) and ask for another
            version = self._version
            built = self._build_once()
            if version == self._version:
                break
        return built

    def _screen_unlocked(self) -> tuple[str, str]:
        if self.locked:
            return "com.android.systemui", "lockscreen"
        if self.showing_recents:
            return LAUNCHER, "recents"
        task = self.tasks[self.foreground]
        if task.popups:
            return task.package, f"popup:{task.popups[0].kind}"
        return task.package, task.top.screen

    def _build_once(self) -> _Built:
        task = self.tasks[self.foreground]
        if not self.screen_on:
            ctx = Ctx(self, self.launcher, self.tasks[LAUNCHER])
            tree, package = system.screen_off(ctx), "com.android.systemui"
        elif self.locked:
            ctx = Ctx(self, self.launcher, self.tasks[LAUNCHER])
            tree, package = system.lockscreen(ctx), "com.android.systemui"
        elif self.showing_recents:
            ctx = Ctx(self, self.launcher, self.tasks[LAUNCHER])
            tree, package = system.recents(ctx), LAUNCHER
        else:
            app = self.app(task.package)
            ctx = Ctx(self, app, task)
            tree = app.build(ctx)
            package = task.package
            if task.popups:
                popups.add_overlay(self, task, ctx, tree)
        set_package(tree, package)
        toast = self._toast
        if toast is not None:
            if time.monotonic() < toast[1]:
                ctx.expire_at(toast[1])
            else:
                self._toast = toast = None
        chrome = (
            self.config.clock,
            self.battery_level,
            self.wifi_on,
            self.dark_mode,
            self.screen_on,
            self.keyboard_top() if self.keyboard_shown else None,
            self.ime_current() if self.keyboard_shown else None,
            toast[0] if toast else None,
            ctx.secure,
            self.foreground == LAUNCHER and not self.showing_recents,
        )
        digest = hashlib.blake2b(repr((tree.signature(), chrome)).encode(), digest_size=12).hexdigest()
        return _Built(
            self._version,
            tree,
            digest,
            chrome,
            ctx.secure or not self.screen_on,
            ctx.on_enter,
            ctx.valid_until,
            package,
        )

    def show_toast(self, text: str, seconds: float = 2.0) -> None:
        with self.lock:
            self._toast = (text, time.monotonic() + seconds)
            self._record("toast", text=text)
            self._changed()

    def hierarchy_xml(self, max_depth: int = 50) -> str:
        if self.profile.hierarchy:
            time.sleep(self.profile.hierarchy)
        with self.lock:
            return dump_xml(self._tree(), rotation=self.orientation, max_depth=max_depth)

    @property
    def renderer(self) -> Renderer:
        if self._renderer is None:
            from mobile_agent.sim.render import Renderer

            self._renderer = Renderer(self.config.width, self.config.height)
        return self._renderer

    def screenshot(self, fmt: str = "png", quality: int = 80, scale: float = 1.0) -> bytes:
        if self.faults.screenshot_fail:
            raise ScreenshotFailed("screenshot failed (injected fault)")
        delay = (
            self.profile.screencap_png if fmt == "png" else self.profile.u2_screenshot
        ) + self.faults.screenshot_delay
        if delay > 0:
            time.sleep(delay)
        with self.lock:
            built = self._built()
            frame = None
            if self._transition is not None:
                old_fp, started = self._transition
                progress = (
                    (time.monotonic() - started) / self.profile.transition if self.profile.transition else 1
                )
                if progress >= 1 or old_fp == built.fingerprint:
                    self._transition = None
                else:
                    frame = (old_fp, min(3, int(progress * 4)))  # quantised: at most 3 intermediate frames
        return self.renderer.encode(built, fmt, quality=quality, scale=scale, transition=frame)


@dataclass
class _Built:
    version: int
    tree: Node
    fingerprint: str
    chrome: tuple
    black: bool
    on_enter: Any
    valid_until: float
    package: str
