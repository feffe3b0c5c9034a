"""The simulated phone's input: taps, gestures, keys, typed text, the clipboard and the focused field."""

from __future__ import annotations

import time

from mobile_agent.errors import InputSecurityError
from mobile_agent.sim.phone_packages import ADB_KEYBOARD
from mobile_agent.sim.world import popups
from mobile_agent.sim.world.base import Ctx, Page
from mobile_agent.sim.world.keys import key_name
from mobile_agent.sim.world.node import Node, hit_test

DOUBLE_TAP_WINDOW = 0.3
SECURITY_EXCEPTION = (
    "java.lang.SecurityException: Injecting input events requires the caller (or the source of the "
    "instrumentation, if any) to have the INJECT_EVENTS permission."
)


class InputMixin:
    """Part of Phone: what touches, keys and text do to the screen in front."""

    def _check_input(self) -> None:
        if self.faults.input_security_exception:
            raise InputSecurityError(
                SECURITY_EXCEPTION, "enable 'USB debugging (security settings)' on the phone"
            )

    def tap(self, x: int, y: int) -> None:
        self._check_input()
        if self.profile.tap:
            time.sleep(self.profile.tap)
        with self.lock:
            self._tap_locked(int(x), int(y))

    def _tap_locked(self, x: int, y: int) -> None:
        self._record("tap", x=x, y=y)
        if not self.screen_on:
            return
        tree = self._tree()
        if self.keyboard_shown and y >= self.keyboard_top():
            return  # the input method window takes the tap
        node = hit_test(tree, x, y, _tappable)
        now = time.monotonic()
        target = id(node) if node is not None else hash((x // 40, y // 40))
        if self._last_tap and now - self._last_tap[0] < DOUBLE_TAP_WINDOW and self._last_tap[1] == target:
            self._record("double_tap", x=x, y=y)
            self._last_tap = None
        else:
            self._last_tap = (now, target)
        if node is None:
            return
        if node.field_key is not None:
            self._focus(self._top_page(), node.field_key, keyboard=True)
        elif node.on_tap_at is not None:
            node.on_tap_at(x, y)
        elif node.on_click is not None:
            node.on_click()

    def long_press(self, x: int, y: int, duration_ms: int = 500) -> None:
        self._check_input()
        time.sleep(duration_ms / 1000 + self.profile.tap)
        with self.lock:
            self._record("long_press", x=int(x), y=int(y), duration_ms=duration_ms)
            if not self.screen_on:
                return
            node = hit_test(self._tree(), int(x), int(y), lambda n: n.on_long_click is not None or n.editable)
            if node is None:
                return
            if node.on_long_click is not None:
                node.on_long_click()
            else:
                self._focus(self._top_page(), node.field_key, keyboard=True)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self._gesture("swipe", [(x1, y1), (x2, y2)], duration_ms)

    def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 500) -> None:
        self._gesture("drag", [(x1, y1), (x2, y2)], duration_ms)

    def swipe_points(self, points: list[tuple[int, int]], duration_ms: int = 300) -> None:
        if not points:
            return
        self._gesture("swipe", [(int(x), int(y)) for x, y in points], duration_ms)

    def _gesture(self, kind: str, points: list[tuple[int, int]], duration_ms: int) -> None:
        self._check_input()
        delay = max(0, duration_ms) / 1000 + self.profile.swipe_extra
        if delay > 0 and self.profile.name != "instant":
            time.sleep(delay)
        (x1, y1), (x2, y2) = points[0], points[-1]
        with self.lock:
            if abs(x2 - x1) < 10 and abs(y2 - y1) < 10:
                if duration_ms >= 400:
                    self._record("long_press", x=x1, y=y1, duration_ms=duration_ms)
                    node = hit_test(self._tree(), x1, y1, lambda n: n.on_long_click is not None)
                    if node is not None and node.on_long_click is not None:
                        node.on_long_click()
                else:
                    self._tap_locked(x1, y1)
                return
            self._record(kind, x1=x1, y1=y1, x2=x2, y2=y2, duration_ms=duration_ms)
            if not self.screen_on:
                return
            tree = self._tree()
            node = hit_test(tree, x1, y1, lambda n: n.on_drag is not None or n.on_scroll is not None)
            if node is None:
                return
            if node.on_drag is not None:
                node.on_drag(x1, y1, x2, y2)
            elif node.on_scroll is not None:
                node.on_scroll(x1 - x2, y1 - y2)

    def key(self, code: int | str) -> None:
        self._check_input()
        if self.profile.key:
            time.sleep(self.profile.key)
        name = key_name(code)
        with self.lock:
            self._record("key", key=name or str(code))
            if name is None:
                return
            handler = getattr(self, f"_key_{name}", None)
            if handler is not None:
                handler()

    def _key_home(self) -> None:
        if self.screen_on and not self.locked:
            self._go_home()

    def _key_app_switch(self) -> None:
        if self.screen_on and not self.locked:
            self.showing_recents = True
            self.keyboard_shown = False
            self._changed(screen=True)

    def _key_back(self) -> None:
        if not self.screen_on or self.locked:
            return
        if self.keyboard_shown:
            self.keyboard_shown = False
            self._changed()
            return
        if self.showing_recents:
            self.showing_recents = False
            self._changed(screen=True)
            return
        task = self.tasks[self.foreground]
        if task.popups:
            popups.on_back(self, task)
            return
        app = self.app(task.package)
        if not app.on_back(Ctx(self, app, task)):
            self._pop_page(task)

    def _key_enter(self) -> None:
        built = self._built()
        if built.on_enter is not None:
            built.on_enter()

    def _key_delete(self) -> None:
        page = self._top_page()
        if page is not None and page.focus is not None and page.fields.get(page.focus):
            page.fields[page.focus] = page.fields[page.focus][:-1]
            self._changed()

    def _key_power(self) -> None:
        self.screen_on = not self.screen_on
        if not self.screen_on:
            self.locked = True
            self.keyboard_shown = False
        self._changed(screen=True)

    def _key_wakeup(self) -> None:
        if not self.screen_on:
            self.screen_on = True
            self._changed(screen=True)

    def _key_sleep(self) -> None:
        if self.screen_on:
            self._key_power()

    def unlock(self) -> None:
        with self.lock:
            self.screen_on = True
            self.locked = False
            self._record("unlock")
            self._changed(screen=True)

    def input_text(self, text: str) -> None:
        self._check_input()
        if self.profile.text:
            time.sleep(self.profile.text)
        with self.lock:
            page = self._top_page()
            if page is None or page.focus is None or not self.screen_on:
                self._record("text", text=text, ignored=True)
                return
            page.fields[page.focus] = page.fields.get(page.focus, "") + text
            self.state.typed.append(
                {"package": self.foreground, "screen": page.screen, "field": page.focus, "text": text}
            )
            self._record("text", text=text, field=page.focus)
            # The input method collapses once text is committed (u2 sends ADB_KEYBOARD_HIDE after typing), so a
            # screen looks the same after a Type action whichever input path the runtime used.
            self.keyboard_shown = False
            self._changed()

    def clear_text(self) -> None:
        self._check_input()
        with self.lock:
            page = self._top_page()
            self._record("clear_text")
            if page is not None and page.focus is not None and page.fields.get(page.focus):
                page.fields[page.focus] = ""
                self._changed()

    @property
    def clipboard(self) -> str:
        with self.lock:
            return self._clipboard

    @clipboard.setter
    def clipboard(self, text: str) -> None:
        with self.lock:
            self._clipboard = text
            self._record("clipboard", length=len(text))

    def paste(self) -> None:
        with self.lock:
            self._record("paste")
            if self._clipboard:
                self.input_text(self._clipboard)

    def hide_keyboard(self) -> None:
        with self.lock:
            if self.keyboard_shown:
                self.keyboard_shown = False
                self._changed()

    def _focus(self, page: Page | None, key: str | None, keyboard: bool) -> None:
        if page is None:
            return
        page.focus = key
        self.keyboard_shown = keyboard and key is not None
        self._changed()

    def _top_page(self) -> Page | None:
        if self.showing_recents or self.locked:
            return None
        task = self.tasks[self.foreground]
        return None if task.popups else task.top

    def keyboard_top(self) -> int:
        """y where the input method window starts (the screen bottom when it is hidden)."""
        if not self.keyboard_shown:
            return self.config.height - self.nav_bar_height
        share = 0.06 if self.ime_current() == ADB_KEYBOARD else 0.33
        return self.config.height - self.nav_bar_height - round(self.config.height * share)


def _tappable(node: Node) -> bool:
    return node.clickable or node.field_key is not None or node.on_tap_at is not None
