"""The simulated phone's identity and packages: props, installed apps, their labels, install/uninstall and app objects."""

from __future__ import annotations

import logging
import threading
from typing import Any

from mobile_agent.sim.world import BUILTIN_APPS, SYSTEM_LABELS, GenericApp, Launcher
from mobile_agent.sim.world.base import SimApp

log = logging.getLogger(__name__)

LATIN_IME = "com.android.inputmethod.latin/.LatinIME"
ADB_KEYBOARD = "com.github.uiautomator/.AdbKeyboard"
U2_PACKAGE = "com.github.uiautomator"
LAUNCHER = Launcher.package

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


class PackagesMixin:
    """Part of Phone: which packages are installed, what they are called, and the SimApp behind each."""

    @property
    def props(self) -> dict[str, str]:
        c = self.config
        return {
            "ro.product.model": c.model,
            "ro.product.brand": c.brand,
            "ro.product.manufacturer": c.manufacturer,
            "ro.product.name": c.model.lower(),
            "ro.product.device": c.model.lower(),
            "ro.product.cpu.abi": "arm64-v8a",
            "ro.product.cpu.abilist": "arm64-v8a,armeabi-v7a,armeabi",
            "ro.build.version.release": c.android_version,
            "ro.build.version.sdk": str(c.sdk),
            "ro.build.version.incremental": "eng.sim.20240601",
            "ro.build.type": "user",
            "ro.build.display.id": f"{c.model}-{c.android_version}",
            "ro.build.fingerprint": f"{c.brand}/{c.model.lower()}/{c.model.lower()}:{c.android_version}/TQ3A/1:user/release-keys",
            "ro.serialno": c.serial,
            "ro.sf.lcd_density": str(c.density),
            "ro.secure": "1",
            "ro.debuggable": "0",
            "persist.sys.locale": "zh-CN",
            "persist.sys.timezone": "Asia/Shanghai",
            "sys.boot_completed": "1",
            "init.svc.adbd": "running",
        }

    @property
    def fs(self) -> Any:
        if self._fs is None:
            from mobile_agent.sim.fs import FileSystem  # owned by the wire side

            self._fs = FileSystem()
        return self._fs

    @fs.setter
    def fs(self, value: Any) -> None:
        self._fs = value

    def installed_packages(self) -> list[str]:
        with self.lock:
            pkgs = dict.fromkeys(SYSTEM_PACKAGES)
            pkgs.update(dict.fromkeys(BUILTIN_APPS))
            pkgs.update(dict.fromkeys(manifest_apps()))
            pkgs.update(dict.fromkeys(self._installed_extra))
            return [p for p in pkgs if p not in self._removed]

    def is_installed(self, pkg: str) -> bool:
        return pkg in self.installed_packages()

    def package_path(self, pkg: str) -> str | None:
        if not self.is_installed(pkg):
            return None
        if pkg in SYSTEM_PACKAGES:
            return f"/system/priv-app/{pkg.rsplit('.', 1)[-1]}/{pkg.rsplit('.', 1)[-1]}.apk"
        return f"/data/app/{pkg}-1/base.apk"

    def launchable_packages(self) -> list[str]:
        """Packages with a launcher icon, in launcher order: the built-in apps first."""
        installed = self.installed_packages()
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
        for pkg in self.installed_packages():
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
        with self.lock:
            self._removed.discard(pkg)
            self._installed_extra[pkg] = label or self._installed_extra.get(pkg, "")
            self._record("install", package=pkg)
            self._changed()

    def uninstall(self, pkg: str) -> bool:
        with self.lock:
            if not self.is_installed(pkg) or pkg in SYSTEM_PACKAGES:
                return False
            self._stop_task(pkg)
            self._removed.add(pkg)
            self._installed_extra.pop(pkg, None)
            if pkg == U2_PACKAGE and self.ime_current() == ADB_KEYBOARD:
                self.settings[("secure", "default_input_method")] = LATIN_IME
            self._record("uninstall", package=pkg)
            self._changed()
            return True

    def app(self, pkg: str) -> SimApp:
        """The simulated app behind a package (a generic one for packages without their own world)."""
        if pkg == LAUNCHER:
            return self.launcher
        found = self._apps.get(pkg)
        if found is None:
            found = BUILTIN_APPS[pkg]() if pkg in BUILTIN_APPS else GenericApp(pkg, self.display_name(pkg))
            self._apps[pkg] = found
        return found
