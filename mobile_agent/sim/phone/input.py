"""The simulated phone's input: taps, gestures, keys, typed text, the clipboard and the focused field."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from mobile_agent.errors import InputSecurityError
from mobile_agent.sim.phone.settings import ADB_KEYBOARD
from mobile_agent.sim.world import popups
from mobile_agent.sim.world.base import Ctx, Page
from mobile_agent.sim.world.keys import key_name
from mobile_agent.sim.world.node import Node, hit_test

if TYPE_CHECKING:
    from mobile_agent.sim.phone.phone import Phone

DOUBLE_TAP_WINDOW = 0.3
SECURITY_EXCEPTION = (
    "java.lang.SecurityException: Injecting input events requires the caller (or the source of the "
    "instrumentation, if any) to have the INJECT_EVENTS permission."
)


class Input:
    """Part of a Phone: what touches, keys and text do to the screen in front; the focus and the keyboard."""

    def __init__(self, phone: Phone) -> None:
        self._phone = phone
        self.keyboard_shown = False  # the input method window is up
        self._clipboard = ""
        self._last_tap: tuple[float, int] | None = None  # (monotonic time, id of the node tapped)

    def _check_input(self) -> None:
        if self._phone.faults.input_security_exception:
            raise InputSecurityError(
                SECURITY_EXCEPTION, "enable 'USB debugging (security settings)' on the phone"
            )

    def tap(self, x: int, y: int) -> None:
        self._check_input()
        phone = self._phone
        if phone.profile.tap:
            time.sleep(phone.profile.tap)
        with phone.lock:
            self.tap_locked(int(x), int(y))

    def tap_locked(self, x: int, y: int) -> None:
        phone = self._phone
        phone.record("tap", x=x, y=y)
        if not phone.screen_on:
            return
        tree = phone.display.tree()
        if self.keyboard_shown and y >= self.keyboard_top():
            return  # the input method window takes the tap
        node = hit_test(tree, x, y, _tappable)
        now = time.monotonic()
        target = id(node) if node is not None else hash((x // 40, y // 40))
        if self._last_tap and now - self._last_tap[0] < DOUBLE_TAP_WINDOW and self._last_tap[1] == target:
            phone.record("double_tap", x=x, y=y)
            self._last_tap = None
        else:
            self._last_tap = (now, target)
        if node is None:
            return
        if node.field_key is not None:
            self.focus(phone.tasks.top_page(), node.field_key, keyboard=True)
        elif node.on_tap_at is not None:
            node.on_tap_at(x, y)
        elif node.on_click is not None:
            node.on_click()

    def long_press(self, x: int, y: int, duration_ms: int = 500) -> None:
        self._check_input()
        phone = self._phone
        time.sleep(duration_ms / 1000 + phone.profile.tap)
        with phone.lock:
            phone.record("long_press", x=int(x), y=int(y), duration_ms=duration_ms)
            if not phone.screen_on:
                return
            tree = phone.display.tree()
            node = hit_test(tree, int(x), int(y), lambda n: n.on_long_click is not None or n.editable)
            if node is None:
                return
            if node.on_long_click is not None:
                node.on_long_click()
            else:
                self.focus(phone.tasks.top_page(), node.field_key, keyboard=True)

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
        phone = self._phone
        delay = max(0, duration_ms) / 1000 + phone.profile.swipe_extra
        if delay > 0 and phone.profile.name != "instant":
            time.sleep(delay)
        (x1, y1), (x2, y2) = points[0], points[-1]
        with phone.lock:
            if abs(x2 - x1) < 10 and abs(y2 - y1) < 10:
                if duration_ms >= 400:
                    phone.record("long_press", x=x1, y=y1, duration_ms=duration_ms)
                    node = hit_test(phone.display.tree(), x1, y1, lambda n: n.on_long_click is not None)
                    if node is not None and node.on_long_click is not None:
                        node.on_long_click()
                else:
                    self.tap_locked(x1, y1)
                return
            phone.record(kind, x1=x1, y1=y1, x2=x2, y2=y2, duration_ms=duration_ms)
            if not phone.screen_on:
                return
            tree = phone.display.tree()
            node = hit_test(tree, x1, y1, lambda n: n.on_drag is not None or n.on_scroll is not None)
            if node is None:
                return
            if node.on_drag is not None:
                node.on_drag(x1, y1, x2, y2)
            elif node.on_scroll is not None:
                node.on_scroll(x1 - x2, y1 - y2)

    # ------------------------------------------------------------------ keys
    def key(self, code: int | str) -> None:
        self._check_input()
        phone = self._phone
        if phone.profile.key:
            time.sleep(phone.profile.key)
        name = key_name(code)
        with phone.lock:
            phone.record("key", key=name or str(code))
            if name is None:
                return
            handler = getattr(self, f"_key_{name}", None)
            if handler is not None:
                handler()

    def _key_home(self) -> None:
        if self._phone.screen_on and not self._phone.locked:
            self._phone.tasks.go_home()

    def _key_app_switch(self) -> None:
        if self._phone.screen_on and not self._phone.locked:
            self._phone.tasks.show_recents()

    def _key_back(self) -> None:
        phone = self._phone
        if not phone.screen_on or phone.locked:
            return
        tasks = phone.tasks
        if self.keyboard_shown:
            self.keyboard_shown = False
            phone.display.changed()
            return
        if tasks.showing_recents:
            tasks.showing_recents = False
            phone.display.changed(screen=True)
            return
        task = tasks.front
        if task.popups:
            popups.on_back(phone, task)
            return
        app = phone.packages.app(task.package)
        if not app.on_back(Ctx(phone, app, task)):
            tasks.pop_page(task)

    def _key_enter(self) -> None:
        built = self._phone.display.built()
        if built.on_enter is not None:
            built.on_enter()

    def _key_delete(self) -> None:
        page = self._phone.tasks.top_page()
        if page is not None and page.focus is not None and page.fields.get(page.focus):
            page.fields[page.focus] = page.fields[page.focus][:-1]
            self._phone.display.changed()

    def _key_power(self) -> None:
        phone = self._phone
        phone.screen_on = not phone.screen_on
        if not phone.screen_on:
            phone.locked = True
            self.keyboard_shown = False
        phone.display.changed(screen=True)

    def _key_wakeup(self) -> None:
        if not self._phone.screen_on:
            self._phone.screen_on = True
            self._phone.display.changed(screen=True)

    def _key_sleep(self) -> None:
        if self._phone.screen_on:
            self._key_power()

    def unlock(self) -> None:
        phone = self._phone
        with phone.lock:
            phone.screen_on = True
            phone.locked = False
            phone.record("unlock")
            phone.display.changed(screen=True)

    # ------------------------------------------------------------------ text
    def input_text(self, text: str) -> None:
        self._check_input()
        phone = self._phone
        if phone.profile.text:
            time.sleep(phone.profile.text)
        with phone.lock:
            page = phone.tasks.top_page()
            if page is None or page.focus is None or not phone.screen_on:
                phone.record("text", text=text, ignored=True)
                return
            on_typed = phone.display.built().on_typed  # the screen the text was typed on
            page.fields[page.focus] = page.fields.get(page.focus, "") + text
            phone.state.typed.append(
                {"package": phone.tasks.foreground, "screen": page.screen, "field": page.focus, "text": text}
            )
            phone.record("text", text=text, field=page.focus)
            # The input method collapses once text is committed (u2 sends ADB_KEYBOARD_HIDE after typing), so a
            # screen looks the same after a Type action whichever input path the runtime used.
            self.keyboard_shown = False
            phone.display.changed()
            if on_typed is not None:
                on_typed(page.focus, text)

    def clear_text(self) -> None:
        self._check_input()
        phone = self._phone
        with phone.lock:
            page = phone.tasks.top_page()
            phone.record("clear_text")
            if page is not None and page.focus is not None and page.fields.get(page.focus):
                page.fields[page.focus] = ""
                phone.display.changed()

    @property
    def clipboard(self) -> str:
        with self._phone.lock:
            return self._clipboard

    @clipboard.setter
    def clipboard(self, text: str) -> None:
        with self._phone.lock:
            self._clipboard = text
            self._phone.record("clipboard", length=len(text))

    def paste(self) -> None:
        with self._phone.lock:
            self._phone.record("paste")
            if self._clipboard:
                self.input_text(self._clipboard)

    # ------------------------------------------------------------------ focus and the keyboard
    def hide_keyboard(self) -> None:
        with self._phone.lock:
            if self.keyboard_shown:
                self.keyboard_shown = False
                self._phone.display.changed()

    def focus(self, page: Page | None, key: str | None, keyboard: bool) -> None:
        """Focus a page's field (None: no field); ``keyboard`` shows the input method for it."""
        if page is None:
            return
        page.focus = key
        self.keyboard_shown = keyboard and key is not None
        self._phone.display.changed()

    def keyboard_top(self) -> int:
        """y where the input method window starts (the screen bottom when it is hidden)."""
        phone = self._phone
        nav_bar = phone.display.nav_bar_height
        if not self.keyboard_shown:
            return phone.config.height - nav_bar
        share = 0.06 if phone.settings.ime_current() == ADB_KEYBOARD else 0.33
        return phone.config.height - nav_bar - round(phone.config.height * share)


def _tappable(node: Node) -> bool:
    return node.clickable or node.field_key is not None or node.on_tap_at is not None
