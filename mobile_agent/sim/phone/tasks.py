"""The simulated phone's foreground and activity stack: launch, force-stop, tasks, pages, popups and recents."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from mobile_agent.sim.world.base import Page, Popup, Task
from mobile_agent.sim.world.launcher import LAUNCHER

if TYPE_CHECKING:
    from mobile_agent.sim.phone.phone import Phone


class Tasks:
    """Part of a Phone: which task is in front, the pages and popups of each task, and moving between them.

    Every method that moves between screens expects the phone's lock held, except the public entry points
    (current, screen, launch, force_stop, clear_data, show_recents), which take it.
    """

    def __init__(self, phone: Phone) -> None:
        self._phone = phone
        self.running: dict[str, Task] = {LAUNCHER: Task(LAUNCHER, [phone.packages.launcher.root_page()])}
        self.foreground = LAUNCHER
        self.recents: list[str] = []  # most recent last, launcher excluded
        self.showing_recents = False
        self.popup_plan: dict[str, list[dict[str, Any]]] = {}  # package -> popups shown at each cold start

    @property
    def front(self) -> Task:
        """The task in the foreground."""
        return self.running[self.foreground]

    def current(self) -> tuple[str, str]:
        with self._phone.lock:
            self._phone.display.tree()  # settles time-based changes (splash countdown) first
            task = self.front
            if self.showing_recents:
                return LAUNCHER, "com.android.launcher3.uioverrides.QuickstepLauncher"
            return task.package, task.top.activity

    def screen(self) -> tuple[str, str]:
        """(package, world screen id) in the foreground, popups included: ("com.tencent.mm", "popup:splash")."""
        with self._phone.lock:
            self._phone.display.tree()
            return self.screen_id()

    def screen_id(self) -> tuple[str, str]:
        """What screen() answers, without settling time-based changes first (the lock is held)."""
        if self._phone.locked:
            return "com.android.systemui", "lockscreen"
        if self.showing_recents:
            return LAUNCHER, "recents"
        task = self.front
        if task.popups:
            return task.package, f"popup:{task.popups[0].kind}"
        return task.package, task.top.screen

    def top_page(self) -> Page | None:
        """The page that takes input: None while the lock screen, recents or a popup is in front."""
        if self.showing_recents or self._phone.locked:
            return None
        task = self.front
        return None if task.popups else task.top

    # ------------------------------------------------------------------ launching and stopping
    def launch(self, pkg: str, activity: str | None = None) -> bool:
        phone = self._phone
        with phone.lock:
            packages = phone.packages
            if not packages.is_installed(pkg) or packages.launcher_activity(pkg) is None:
                return False
            app = packages.app(pkg)
            known = {app.launcher_activity, *app.activities.values()}
            if activity is not None and _full_activity(pkg, activity) not in known:
                return False
            cold = pkg not in self.running
        if cold and phone.profile.cold_start:
            time.sleep(phone.profile.cold_start)
        with phone.lock:
            self.launch_locked(pkg, activity)
        return True

    def launch_locked(self, pkg: str, activity: str | None = None) -> None:
        cold = pkg not in self.running
        if cold:
            task = Task(pkg, [self._phone.packages.app(pkg).root_page()])
            task.popups = [
                Popup(p["kind"], pkg, seconds=float(p.get("seconds", 3)))
                for p in self.popup_plan.get(pkg, [])
            ]
            if task.popups:
                task.popups[0].shown_at = time.monotonic()
            self.running[pkg] = task
        self._bring_to_front(pkg)
        self._phone.record("launch", package=pkg, cold=cold)
        self._phone.display.changed(screen=True)

    def _bring_to_front(self, pkg: str) -> None:
        self.showing_recents = False
        self._phone.input.keyboard_shown = False
        self.foreground = pkg
        if pkg != LAUNCHER:
            if pkg in self.recents:
                self.recents.remove(pkg)
            self.recents.append(pkg)

    def force_stop(self, pkg: str) -> None:
        with self._phone.lock:
            self.stop(pkg)
            self._phone.record("force_stop", package=pkg)

    def stop(self, pkg: str) -> None:
        """End a package's task (its pages and popups); the launcher comes to the front if it was there."""
        if pkg == LAUNCHER or pkg not in self.running:
            return
        del self.running[pkg]
        if pkg in self.recents:
            self.recents.remove(pkg)
        if self.foreground == pkg:
            self.foreground = LAUNCHER
            self._phone.input.keyboard_shown = False
        self._phone.display.changed(screen=True)

    def clear_data(self, pkg: str) -> None:
        phone = self._phone
        with phone.lock:
            self.stop(pkg)
            phone.packages.reset_app(pkg)
            phone.state.logged_in.pop(pkg, None)
            phone.record("clear_data", package=pkg)

    def reset(self) -> None:
        """Only the launcher runs, in front (a new scenario); its own pages stay as they are."""
        for pkg in list(self.running):
            if pkg != LAUNCHER:
                del self.running[pkg]
        self.recents.clear()
        self.foreground = LAUNCHER
        self.showing_recents = False

    # ------------------------------------------------------------------ pages
    def go_home(self) -> None:
        self.running[LAUNCHER].pages[1:] = []
        self._bring_to_front(LAUNCHER)
        self._phone.display.changed(screen=True)

    def push_page(self, task: Task, page: Page) -> None:
        task.pages.append(page)
        self._phone.input.keyboard_shown = False
        self._phone.display.changed(screen=True)

    def pop_page(self, task: Task) -> None:
        if len(task.pages) > 1:
            task.pages.pop()
            self._phone.input.keyboard_shown = False
            self._phone.display.changed(screen=True)
        elif task.package != LAUNCHER:
            self.go_home()

    def replace_page(self, task: Task, page: Page) -> None:
        task.pages[-1] = page
        self._phone.input.keyboard_shown = False
        self._phone.display.changed(screen=True)

    def reset_task(self, task: Task) -> None:
        del task.pages[1:]
        self._phone.input.keyboard_shown = False
        self._phone.display.changed(screen=True)

    # ------------------------------------------------------------------ popups and recents
    def dismiss_popup(self, task: Task, how: str) -> None:
        if not task.popups:
            return
        popup = task.popups.pop(0)
        self._phone.state.popups_dismissed.append({"package": task.package, "popup": popup.kind, "how": how})
        self._phone.record("popup", package=task.package, popup=popup.kind, how=how)
        if task.popups:
            task.popups[0].shown_at = time.monotonic()
        self._phone.display.changed(screen=True)

    def show_recents(self) -> None:
        with self._phone.lock:
            self.showing_recents = True
            self._phone.input.keyboard_shown = False
            self._phone.display.changed(screen=True)


def _full_activity(pkg: str, activity: str) -> str:
    return pkg + activity if activity.startswith(".") else activity
