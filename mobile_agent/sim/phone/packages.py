"""The simulated phone's packages: which are installed, their labels and paths, install/uninstall, the app objects."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from mobile_agent.sim.world.base import SimApp
from mobile_agent.sim.world.catalog import BUILTIN_APPS, SYSTEM_LABELS
from mobile_agent.sim.world.generic import GenericApp
from mobile_agent.sim.world.launcher import LAUNCHER, Launcher

if TYPE_CHECKING:
    from mobile_agent.sim.phone.phone import Phone

log = logging.getLogger(__name__)

U2_PACKAGE = "com.github.uiautomator"  # the uiautomator2 apk: its server and the AdbKeyboard input method

SYSTEM_PACKAGES = [
    "android",
    "com.android.systemui",
    "com.android.settings",
    "com.android.launcher3",
    "com.android.phone",
    "com.android.contacts",
    "com.android.camera2",
    "com.android.gallery3d",
    "com.android.deskclock",
    "com.android.calculator2",
    "com.android.chrome",
    "com.android.inputmethod.latin",
    "com.android.permissioncontroller",
    "com.android.shell",
    "com.android.providers.settings",
]
# System packages that have a launcher icon.
LAUNCHABLE_SYSTEM = {
    "com.android.settings",
    "com.android.contacts",
    "com.android.camera2",
    "com.android.gallery3d",
    "com.android.deskclock",
    "com.android.calculator2",
    "com.android.chrome",
    "com.android.phone",
}

_manifest_cache: dict[str, str] | None = None
_manifest_lock = threading.Lock()


def manifest_apps() -> dict[str, str]:
    """package -> display name of every app that has a manifest in apps/ (empty when the registry is missing)."""
    global _manifest_cache
    with _manifest_lock:
        if _manifest_cache is None:
            found: dict[str, str] = {}
            try:
                from mobile_agent.apps.registry import AppRegistry

                registry = AppRegistry.load()
                apps = registry.apps.values() if isinstance(registry.apps, dict) else registry.apps
                for app in apps:
                    found[str(app.package)] = str(app.name)
            except ImportError:
                pass
            except Exception as exc:  # a broken manifest must not take the simulated phone down
                log.warning("app manifests not loaded: %s", exc)
            _manifest_cache = found
        return _manifest_cache


class Packages:
    """Part of a Phone: which packages are installed, what they are called, and the SimApp behind each."""

    def __init__(self, phone: Phone) -> None:
        self._phone = phone
        self._installed_extra: dict[str, str] = {pkg: "" for pkg in phone.config.extra_packages}
        if phone.config.u2_apk_installed:
            self._installed_extra[U2_PACKAGE] = "ATX"
        self._removed: set[str] = set()
        self._apps: dict[str, SimApp] = {}
        self.launcher = Launcher()

    def installed(self) -> list[str]:
        with self._phone.lock:
            pkgs = dict.fromkeys(SYSTEM_PACKAGES)
            pkgs.update(dict.fromkeys(BUILTIN_APPS))
            pkgs.update(dict.fromkeys(manifest_apps()))
            pkgs.update(dict.fromkeys(self._installed_extra))
            return [p for p in pkgs if p not in self._removed]

    def is_installed(self, pkg: str) -> bool:
        return pkg in self.installed()

    def path(self, pkg: str) -> str | None:
        if not self.is_installed(pkg):
            return None
        if pkg in SYSTEM_PACKAGES:
            return f"/system/priv-app/{pkg.rsplit('.', 1)[-1]}/{pkg.rsplit('.', 1)[-1]}.apk"
        return f"/data/app/{pkg}-1/base.apk"

    def launchable(self) -> list[str]:
        """Packages with a launcher icon, in launcher order: the built-in apps first."""
        installed = self.installed()
        launchable = [
            p for p in installed if p in LAUNCHABLE_SYSTEM or (p not in SYSTEM_PACKAGES and p != U2_PACKAGE)
        ]
        first = [p for p in BUILTIN_APPS if p in launchable]
        return first + [p for p in launchable if p not in first]

    def display_name(self, pkg: str) -> str:
        if pkg in BUILTIN_APPS:
            return BUILTIN_APPS[pkg].label
        if pkg in SYSTEM_LABELS:
            return SYSTEM_LABELS[pkg]
        label = self._installed_extra.get(pkg) or manifest_apps().get(pkg)
        return label or pkg

    def package_for_name(self, name: str) -> str | None:
        wanted = name.strip().lower()
        for pkg in self.installed():
            if pkg.lower() == wanted or self.display_name(pkg).lower() == wanted:
                return pkg
        return None

    def launcher_activity(self, pkg: str) -> str | None:
        if not self.is_installed(pkg):
            return None
        if pkg == LAUNCHER:
            return self.launcher.launcher_activity
        if pkg in SYSTEM_PACKAGES and pkg not in LAUNCHABLE_SYSTEM:
            return None
        return self.app(pkg).launcher_activity

    def install(self, pkg: str, label: str | None = None) -> None:
        phone = self._phone
        with phone.lock:
            self._removed.discard(pkg)
            self._installed_extra[pkg] = label or self._installed_extra.get(pkg, "")
            phone.record("install", package=pkg)
            phone.display.changed()

    def uninstall(self, pkg: str) -> bool:
        phone = self._phone
        with phone.lock:
            if not self.is_installed(pkg) or pkg in SYSTEM_PACKAGES:
                return False
            phone.tasks.stop(pkg)
            self._removed.add(pkg)
            self._installed_extra.pop(pkg, None)
            phone.settings.package_removed(pkg)
            phone.record("uninstall", package=pkg)
            phone.display.changed()
            return True

    def remove(self, packages: list[str]) -> None:
        """Take packages off the phone without a trace in the log (a scenario's removed_packages)."""
        self._removed.update(packages)

    def app(self, pkg: str) -> SimApp:
        """The simulated app behind a package (a generic one for packages without their own world)."""
        if pkg == LAUNCHER:
            return self.launcher
        found = self._apps.get(pkg)
        if found is None:
            found = BUILTIN_APPS[pkg]() if pkg in BUILTIN_APPS else GenericApp(pkg, self.display_name(pkg))
            self._apps[pkg] = found
        return found

    def reset_app(self, pkg: str) -> None:
        """Forget an app's own data (`pm clear`), if its app object was ever made."""
        if pkg in self._apps:
            self._apps[pkg].reset(self._phone)

    def forget_apps(self) -> None:
        """Drop every app object, so each app starts from scratch (a new scenario)."""
        self._apps.clear()
