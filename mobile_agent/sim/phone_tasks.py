"""The simulated phone's foreground and activity stack: launch, force-stop, tasks, pages, popups and recents."""

from __future__ import annotations

import time

from mobile_agent.sim.phone_packages import LAUNCHER
from mobile_agent.sim.world.base import Page, Popup, Task


class TasksMixin:
    """Part of Phone: which task is in front, the pages of each task, and moving between them."""

    def current(self) -> tuple[str, str]:
        with self.lock:
            self._tree()  # settles time-based changes (splash countdown) first
            task = self.tasks[self.foreground]
            if self.showing_recents:
                return LAUNCHER, "com.android.launcher3.uioverrides.QuickstepLauncher"
            return task.package, task.top.activity

    def screen(self) -> tuple[str, str]:
        """(package, world screen id) in the foreground, popups included: ("com.tencent.mm", "popup:splash")."""
        with self.lock:
            self._tree()
            return self._screen_unlocked()

    def launch(self, pkg: str, activity: str | None = None) -> bool:
        with self.lock:
            if not self.is_installed(pkg) or self.launcher_activity(pkg) is None:
                return False
            known = {self.app(pkg).launcher_activity, *self.app(pkg).activities.values()}
            if activity is not None and _full_activity(pkg, activity) not in known:
                return False
            cold = pkg not in self.tasks
        if cold and self.profile.cold_start:
            time.sleep(self.profile.cold_start)
        with self.lock:
            self._launch_locked(pkg, activity)
        return True

    def _launch_locked(self, pkg: str, activity: str | None) -> None:
        cold = pkg not in self.tasks
        if cold:
            task = Task(pkg, [self.app(pkg).root_page()])
            task.popups = [
                Popup(p["kind"], pkg, seconds=float(p.get("seconds", 3)))
                for p in self.popup_plan.get(pkg, [])
            ]
            if task.popups:
                task.popups[0].shown_at = time.monotonic()
            self.tasks[pkg] = task
        self._bring_to_front(pkg)
        self._record("launch", package=pkg, cold=cold)
        self._changed(screen=True)

    def _bring_to_front(self, pkg: str) -> None:
        self.showing_recents = False
        self.keyboard_shown = False
        self.foreground = pkg
        if pkg != LAUNCHER:
            if pkg in self.recents:
                self.recents.remove(pkg)
            self.recents.append(pkg)

    def force_stop(self, pkg: str) -> None:
        with self.lock:
            self._stop_task(pkg)
            self._record("force_stop", package=pkg)

    def _stop_task(self, pkg: str) -> None:
        if pkg == LAUNCHER or pkg not in self.tasks:
            return
        del self.tasks[pkg]
        if pkg in self.recents:
            self.recents.remove(pkg)
        if self.foreground == pkg:
            self.foreground = LAUNCHER
            self.keyboard_shown = False
        self._changed(screen=True)

    def clear_data(self, pkg: str) -> None:
        with self.lock:
            self._stop_task(pkg)
            if pkg in self._apps:
                self._apps[pkg].reset(self)
            self.state.logged_in.pop(pkg, None)
            self._record("clear_data", package=pkg)

    def _go_home(self) -> None:
        self.tasks[LAUNCHER].pages[1:] = []
        self._bring_to_front(LAUNCHER)
        self._changed(screen=True)

    def _push_page(self, task: Task, page: Page) -> None:
        task.pages.append(page)
        self.keyboard_shown = False
        self._changed(screen=True)

    def _pop_page(self, task: Task) -> None:
        if len(task.pages) > 1:
            task.pages.pop()
            self.keyboard_shown = False
            self._changed(screen=True)
        elif task.package != LAUNCHER:
            self._go_home()

    def _replace_page(self, task: Task, page: Page) -> None:
        task.pages[-1] = page
        self.keyboard_shown = False
        self._changed(screen=True)

    def _reset_task(self, task: Task) -> None:
        del task.pages[1:]
        self.keyboard_shown = False
        self._changed(screen=True)

    def _dismiss_popup(self, task: Task, how: str) -> None:
        if not task.popups:
            return
        popup = task.popups.pop(0)
        self.state.popups_dismissed.append({"package": task.package, "popup": popup.kind, "how": how})
        self._record("popup", package=task.package, popup=popup.kind, how=how)
        if task.popups:
            task.popups[0].shown_at = time.monotonic()
        self._changed(screen=True)

    def show_recents(self) -> None:
        with self.lock:
            self.showing_recents = True
            self.keyboard_shown = False
            self._changed(screen=True)


def _full_activity(pkg: str, activity: str) -> str:
    return pkg + activity if activity.startswith(".") else activity
