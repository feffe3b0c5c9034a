"""The app registry: every manifest loaded and checked, and the questions the agent loop asks of it."""

from __future__ import annotations

import hashlib
import importlib.resources
import logging
import os
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from mobile_agent.actions import Action
from mobile_agent.apps import registry_cache
from mobile_agent.apps.gkd_import import GkdImport, load_subscription
from mobile_agent.apps.linemap import LineMappedDoc
from mobile_agent.apps.names import NameIndex, normalise
from mobile_agent.apps.popups import AppVersion, ScreenFacts, episode_memory, rule_needs, run_rules
from mobile_agent.apps.query.needs import Need
from mobile_agent.apps.schema import AppManifest, ConsequentialRule, PopupRule, SharedRules
from mobile_agent.apps.selectors import any_element, rule_holds
from mobile_agent.errors import ConfigError, UserError
from mobile_agent.screen.viewtree import Element, ViewTree

log = logging.getLogger(__name__)

APPS_DIR_ENV = "MOBILE_AGENT_APPS"
POPUP_RULES_ENV = "MOBILE_AGENT_POPUP_RULES"  # GKD subscription files, separated by os.pathsep
SHIPPED_PACKAGE = "mobile_agent.app_manifests"


class UnknownApp(UserError):
    """No app by that name. ``suggestions`` holds the names of apps that look like it (may be empty)."""

    def __init__(
        self, name: str, suggestions: list[str], message: str | None = None, hint: str | None = None
    ):
        if hint is None:
            hint = (
                f"did you mean {' / '.join(suggestions)}?"
                if suggestions
                else "run `mobile-agent apps list` for known apps, or add a manifest to --apps-dir"
            )
        super().__init__(message or f"unknown app {name!r}", hint)
        self.name = name
        self.suggestions = suggestions


class AppNotInstalled(UnknownApp):
    """The name is a known app, but none of its packages is installed on the phone."""


@dataclass(frozen=True)
class PopupMatch:
    """A known popup on screen and the action that dismisses it (device pixels).

    From :meth:`AppRegistry.match_popup` ``action`` and ``element`` are always set; from ``explain_popups``
    a rule that does not fire has ``action`` None and ``reason`` says why.
    """

    rule: PopupRule
    action: Action | None
    app_id: str | None  # None: a shared rule (apps/_common.yaml) or one imported for any app
    element: Element | None  # the rule's target
    reason: str = ""

    @property
    def fires(self) -> bool:
        return self.action is not None

    @property
    def description(self) -> str:
        return self.rule.description or self.rule.id


@dataclass(frozen=True)
class LaunchTarget:
    package: str
    activity: str | None  # fully qualified or starting with "." (relative to the package); None: default
    app_id: str | None  # None when found among the phone's packages, not in the registry


@dataclass(frozen=True)
class _Origin:
    doc: LineMappedDoc

    @property
    def path(self) -> str:
        return self.doc.path

    def line(self, *loc: object) -> int:
        return self.doc.line_of(tuple(loc))


def shipped_apps_dir() -> Path:
    """The folder of the manifests that ship with the package (apps/ in a checkout)."""
    return Path(str(importlib.resources.files(SHIPPED_PACKAGE)))


def load_registry(apps_dir: str | Path | None = None, *, include_shipped: bool = True) -> AppRegistry:
    """Shipped manifests plus the user's folder (``apps_dir``, else $MOBILE_AGENT_APPS). Raises ConfigError."""
    from mobile_agent.settings.values import load_settings

    user_dir = apps_dir if apps_dir is not None else load_settings().apps_dir  # MOBILE_AGENT_APPS, config
    dirs = [shipped_apps_dir()] if include_shipped else []
    if user_dir is not None:
        dirs.append(_existing_dir(user_dir))
    return with_env_subscriptions(AppRegistry.from_dirs(dirs))


def with_env_subscriptions(registry: AppRegistry) -> AppRegistry:
    """The registry plus the subscriptions named by $MOBILE_AGENT_POPUP_RULES (what --popup-rules sets)."""
    for path in filter(None, os.environ.get(POPUP_RULES_ENV, "").split(os.pathsep)):
        registry = registry.with_subscription(load_subscription(path))
    return registry


def _existing_dir(folder: str | Path) -> Path:
    path = Path(folder).expanduser()
    if not path.is_dir():
        raise ConfigError(
            "apps folder does not exist or is not a folder",
            f"create it or point --apps-dir / ${APPS_DIR_ENV} at a folder of *.yaml manifests",
            path=str(path),
        )
    return path


_CACHE: dict[tuple, AppRegistry] = {}
_CACHE_LOCK = threading.Lock()


def _folders_signature(dirs: list[Path]) -> tuple:
    """What the registry built from ``dirs`` depends on: each folder and the name and content digest of every file
    the builder reads there (reading and hashing them costs ~1 ms; mtimes can miss a rewrite within a tick)."""
    parts: list[tuple] = []
    for folder in dirs:
        files = []
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.name.endswith((".yaml", ".yml", ".json5")):
                        digest = hashlib.blake2b(Path(entry.path).read_bytes(), digest_size=16).digest()
                        files.append((entry.name, digest))
        except OSError:
            files.append(("<unreadable>", os.urandom(8)))  # never a cache hit: the build reports the problem
        parts.append((str(folder), tuple(sorted(files))))
    return tuple(parts)


def check_dirs(dirs: Iterable[Path]) -> list[ConfigError]:
    """Every problem in these folders (not only the first); empty when they load cleanly."""
    return _Builder(list(dirs)).build().errors


class AppRegistry:
    """All known apps. Build it with :func:`load_registry` (or ``from_dirs``); it is read-only afterwards."""

    def __init__(
        self,
        manifests: list[AppManifest],
        shared: list[SharedRules],
        origins: dict[str, _Origin],
    ) -> None:
        self._manifests = {m.id: m for m in manifests}
        self._origins = origins
        self._shared_popups = [rule for s in shared for rule in s.popups]
        self._shared_consequential = [rule for s in shared for rule in s.consequential]
        self._imported: dict[str, list[PopupRule]] = {}
        self._imported_shared: list[PopupRule] = []
        self._subscriptions: list[GkdImport] = []
        self._popup_plans: dict[tuple, list[tuple[str | None, PopupRule, tuple[Need, ...]]]] = {}
        self._by_package: dict[str, str] = {}
        self._names = NameIndex()
        for m in (
            manifests
        ):  # a package's owner is the app it is primary for, then the first app with it as variant
            self._by_package.setdefault(m.package, m.id)
        for m in manifests:
            for pkg in m.packages:
                self._by_package.setdefault(pkg, m.id)
            for name in m.names:
                self._names.add(name, m.id)
        for m in manifests:  # ids last, so that a written name always wins over another app's id
            self._names.add(m.id, m.id)

    @classmethod
    def load(
        cls, extra_dirs: Iterable[str | Path] | None = None, *, include_shipped: bool = True
    ) -> AppRegistry:
        """Shipped manifests plus ``extra_dirs`` (default: $MOBILE_AGENT_APPS when set). Raises ConfigError."""
        if extra_dirs is None:
            return load_registry(include_shipped=include_shipped)
        dirs = [shipped_apps_dir()] if include_shipped else []
        for folder in extra_dirs:
            dirs.append(_existing_dir(folder))
        return with_env_subscriptions(cls.from_dirs(dirs))

    @classmethod
    def from_dirs(cls, dirs: list[Path]) -> AppRegistry:
        """Later folders override earlier ones by manifest id. Raises the first ConfigError found.

        Built once per process for the same folders while no file in them changes, and kept on disk for the next
        process (apps/registry_cache.py: parsing every manifest costs ~60 ms of CPU, loading the stored build ~3).
        The registry is read-only, so every caller may share it."""
        key = _folders_signature(dirs)
        with _CACHE_LOCK:
            cached = _CACHE.get(key)
        if cached is not None:
            return cached
        registry = registry_cache.cached("registry", key, AppRegistry, lambda: cls._build(dirs))
        with _CACHE_LOCK:
            _CACHE.clear()  # one entry is enough: a process uses one set of folders, and old ones are stale
            _CACHE[key] = registry
        return registry

    @classmethod
    def _build(cls, dirs: list[Path]) -> AppRegistry:
        built = _Builder(dirs).build()
        if built.errors:
            first = built.errors[0]
            if len(built.errors) > 1:
                others = "; ".join(e.message for e in built.errors[1:4])
                first.hint = f"{first.hint or 'fix it'} — also: {others}" + (
                    " ..." if len(built.errors) > 4 else ""
                )
            raise first
        registry = cls(built.manifests, built.shared, built.origins)
        for imported in built.imports:
            registry = registry.with_subscription(imported)
        return registry

    # -- listing ---------------------------------------------------------------------------------------------
    def __iter__(self) -> Iterator[AppManifest]:
        return iter(sorted(self._manifests.values(), key=lambda m: (m.category, m.id)))

    def __len__(self) -> int:
        return len(self._manifests)

    @property
    def apps(self) -> dict[str, AppManifest]:
        """id -> manifest."""
        return dict(self._manifests)

    def get(self, app_id: str) -> AppManifest | None:
        return self._manifests.get(app_id)

    def path_of(self, app_id: str) -> Path:
        return Path(self._origins[app_id].path)

    # -- names -----------------------------------------------------------------------------------------------
    def lookup(self, name: str) -> AppManifest | None:
        """Like resolve, but None instead of an error. A package name also finds its app."""
        app_id = self._names.lookup(name) or self._by_package.get(name.strip())
        return self._manifests[app_id] if app_id else None

    def resolve(self, name: str) -> AppManifest:
        """Name or alias -> manifest: exact, alias, normalised (case, width, spaces, punctuation). Else UnknownApp."""
        manifest = self.lookup(name)
        if manifest is None:
            raise UnknownApp(name, self.suggestions(name))
        return manifest

    def suggestions(self, name: str, limit: int = 5) -> list[str]:
        return [self._manifests[i].name for i in self._names.similar_ids(name, limit)]

    def resolve_launch(
        self, name: str, installed_packages: set[str], labels: Mapping[str, str] | None = None
    ) -> str:
        """The package to launch for ``name`` on a phone with ``installed_packages``.

        Registry first (the first of the app's packages that is installed; its primary package when the installed
        set is empty, i.e. unknown); then the phone's own packages by package name, by display label (``labels``:
        package -> label, when the caller has them) or by the last part of the package name ("chrome").
        """
        return self.resolve_launch_target(name, installed_packages, labels).package

    def resolve_launch_target(
        self, name: str, installed_packages: set[str], labels: Mapping[str, str] | None = None
    ) -> LaunchTarget:
        """Like resolve_launch, plus the activity to start when the manifest names one.

        The activity matters where one package has several launcher icons (Xiaomi's contacts package is also its
        phone app); None means "the package's default launcher activity".
        """
        manifest = self.lookup(name)
        if manifest is not None:
            if not installed_packages:
                return LaunchTarget(manifest.package, manifest.launch_activity, manifest.id)
            for pkg in manifest.packages:
                if pkg in installed_packages:
                    return LaunchTarget(pkg, manifest.launch_activity_for(pkg), manifest.id)
            raise AppNotInstalled(
                name,
                [],
                message=f"{manifest.name} ({' / '.join(manifest.packages)}) is not installed on this phone",
                hint="install it on the phone, or check the package with `mobile-agent apps verify`",
            )
        stripped = name.strip()
        if stripped in installed_packages:
            return LaunchTarget(stripped, None, None)
        key = normalise(name)
        if key and labels:
            hits = sorted(
                pkg for pkg, label in labels.items() if pkg in installed_packages and normalise(label) == key
            )
            if hits:
                return LaunchTarget(hits[0], None, None)
        if key:
            tails = [pkg for pkg in installed_packages if normalise(pkg.rsplit(".", 1)[-1]) == key]
            if len(tails) == 1:
                return LaunchTarget(tails[0], None, None)
        suggestions = self.suggestions(name)
        if labels:
            suggestions += [label for label in labels.values() if key and key in normalise(label)][:3]
        raise UnknownApp(name, suggestions)

    def by_package(self, package: str) -> AppManifest | None:
        app_id = self._by_package.get(package)
        return self._manifests[app_id] if app_id else None

    # -- knowledge for the loop ------------------------------------------------------------------------------
    def hints(self, package: str) -> str | None:
        """Short layout hints for the model, plus a sentence about login / captcha walls; None for unknown apps."""
        manifest = self.by_package(package)
        if manifest is None:
            return None
        parts = [manifest.hints.strip()] if manifest.hints else []
        if manifest.walls.login:
            parts.append(
                "Much of this app needs a logged-in account; if a login screen appears, ask the user."
            )
        if manifest.walls.captcha:
            parts.append("This app often shows captchas (sliders, pictures); ask the user to solve them.")
        return " ".join(parts) or None

    def popup_rules(self, package: str) -> list[tuple[str | None, PopupRule]]:
        """(app id or None for shared, rule) in the order they are tried: the app's manifest, rules imported
        for the package, the shared manifests, rules imported for any app."""
        manifest = self.by_package(package)
        own = [(manifest.id, r) for r in manifest.popups] if manifest else []
        owner = manifest.id if manifest else None
        imported = [(owner, r) for r in self._imported.get(package, [])]
        imported += [(owner, r) for s in self._subscriptions for r in s.rules_for(package)]
        shared = [(None, r) for r in self._shared_popups]
        shared_imported = [(None, r) for r in self._imported_shared]
        shared_imported += [(None, r) for s in self._subscriptions for r in s.shared_rules()]
        return own + imported + shared + shared_imported

    @property
    def subscriptions(self) -> list[GkdImport]:
        """The GKD subscriptions imported into this registry (from --popup-rules or *.json5 in an apps folder)."""
        return list(self._subscriptions)

    def with_subscription(self, imported: GkdImport) -> AppRegistry:
        """A copy with the subscription's rules tried after its own (converted per package when first needed)."""
        copy = self.with_popup_rules({}, [])
        copy._subscriptions = [*self._subscriptions, imported]
        return copy

    def with_popup_rules(
        self, by_package: Mapping[str, list[PopupRule]], shared: list[PopupRule]
    ) -> AppRegistry:
        """A copy of this registry with extra popup rules (from an imported subscription) tried after its own."""
        copy = AppRegistry.__new__(AppRegistry)
        copy.__dict__.update(self.__dict__)
        merged = {pkg: list(rules) for pkg, rules in self._imported.items()}
        for pkg, rules in by_package.items():
            merged.setdefault(pkg, []).extend(rules)
        copy._imported = merged
        copy._imported_shared = [*self._imported_shared, *shared]
        copy._popup_plans = {}
        return copy

    def match_popup(
        self,
        package: str,
        hierarchy_xml: str | bytes,
        *,
        activity: str | None = None,
        last_rule: str | None = None,
        episode: str | None = None,
        app_version: AppVersion | None = None,
    ) -> PopupMatch | None:
        """The first popup rule that fires on the screen, with its action (see :meth:`explain_popups`).

        ``episode``: the episode this screen belongs to; GKD rules' timing limits (matchTime, actionMaximum, ...)
        and chains are kept per episode (apps/popups.py), and are not applied without one."""
        facts = ScreenFacts(
            package, activity, last_rule, app_version, episode_memory(episode) if episode else None
        )
        return next((m for m in self._popup_outcomes(facts, hierarchy_xml) if m.fires), None)

    def explain_popups(
        self, package: str, hierarchy_xml: str | bytes, *, activity: str | None = None
    ) -> list[PopupMatch]:
        """Every rule tried on the screen, in order, with what it would do or why it would not fire."""
        return list(self._popup_outcomes(ScreenFacts(package, activity), hierarchy_xml, stop=False))

    def _popup_outcomes(
        self, facts: ScreenFacts, hierarchy_xml: str | bytes, *, stop: bool = True
    ) -> Iterator[PopupMatch]:
        tree = ViewTree.parse(hierarchy_xml)
        if tree is None:
            return
        package = facts.package

        def consequential(element: Element) -> str | None:
            careful = self.match_consequential(package, element.as_dict())
            return None if careful is None else careful.kind

        for app_id, o in run_rules(
            self._popup_plan(package), tree, facts, consequential=consequential, stop=stop
        ):
            yield PopupMatch(rule=o.rule, action=o.action, app_id=app_id, element=o.element, reason=o.reason)

    def _popup_plan(self, package: str) -> list[tuple[str | None, PopupRule, tuple[Need, ...]]]:
        """The package's rules in order with what each needs on screen, worked out once per package (and per
        naming of the subscriptions' categories, which decides which of their rules act)."""
        key = (package, *(s.named for s in self._subscriptions))
        plan = self._popup_plans.get(key)
        if plan is None:
            plan = [(app_id, rule, rule_needs(rule)) for app_id, rule in self.popup_rules(package)]
            self._popup_plans[key] = plan
        return plan

    def consequential(self, package: str) -> list[ConsequentialRule]:
        """The app's consequential rules followed by the shared ones."""
        manifest = self.by_package(package)
        return (manifest.consequential if manifest else []) + self._shared_consequential

    def match_consequential(self, package: str, element: Mapping[str, str]) -> ConsequentialRule | None:
        """The element-scope rule that names this element (keys: text, resource_id, content_desc, class)."""
        return next(
            (r for r in self.consequential(package) if r.scope == "element" and rule_holds(r, dict(element))),
            None,
        )

    def match_consequential_screen(
        self, package: str, hierarchy_xml: str | bytes
    ) -> tuple[ConsequentialRule, Element] | None:
        """A screen-scope rule with a matching element anywhere on the screen (a payment-password page...)."""
        tree = ViewTree.parse(hierarchy_xml)
        if tree is None:
            return None
        for rule in self.consequential(package):
            if rule.scope == "screen":
                element = any_element(tree, rule)
                if element is not None:
                    return rule, element
        return None


@dataclass
class _Built:
    manifests: list[AppManifest]
    shared: list[SharedRules]
    origins: dict[str, _Origin]
    errors: list[ConfigError]
    imports: list[GkdImport]


class _Builder:
    """Loads folders in order, applies overrides by id, and collects every problem with its file and line."""

    def __init__(self, dirs: list[Path]) -> None:
        self.dirs = dirs

    def build(self) -> _Built:
        from mobile_agent.apps.yamlsrc import load_yaml, validate  # not needed when the disk cache serves

        errors: list[ConfigError] = []
        manifests: dict[str, AppManifest] = {}
        origins: dict[str, _Origin] = {}
        shared: list[SharedRules] = []
        imports: list[GkdImport] = []
        for folder in self.dirs:
            seen_here: dict[str, _Origin] = {}
            for path in sorted(folder.glob("*.json5")):  # GKD subscriptions the user put beside the manifests
                try:
                    imports.append(load_subscription(path))
                except UserError as exc:
                    errors.append(ConfigError(exc.message, exc.hint, path=str(path)))
            for path in sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]):
                try:
                    doc = load_yaml(path)
                    if path.name.startswith("_"):
                        shared.append(validate(SharedRules, doc))  # type: ignore[arg-type]
                        continue
                    manifest: AppManifest = validate(AppManifest, doc)  # type: ignore[assignment]
                except ConfigError as exc:
                    errors.append(exc)
                    continue
                origin = _Origin(doc)
                if manifest.id in seen_here:
                    errors.append(
                        ConfigError(
                            f"duplicate app id {manifest.id!r}",
                            f"{seen_here[manifest.id].path}:{seen_here[manifest.id].line('id')} has the same id; "
                            "rename one",
                            path=origin.path,
                            line=origin.line("id"),
                        )
                    )
                    continue
                if manifest.id in manifests:
                    log.info(
                        "%s overrides the manifest %r from %s", path, manifest.id, origins[manifest.id].path
                    )
                seen_here[manifest.id] = origin
                manifests[manifest.id] = manifest
                origins[manifest.id] = origin
        errors += self._collisions(list(manifests.values()), origins)
        return _Built(list(manifests.values()), shared, origins, errors, imports)

    @staticmethod
    def _collisions(manifests: list[AppManifest], origins: dict[str, _Origin]) -> list[ConfigError]:
        errors: list[ConfigError] = []
        packages: dict[str, tuple[str, int]] = {}  # package -> (owner id, line)
        names: dict[str, tuple[str, str, int]] = {}  # normalised name -> (owner id, name, line)
        by_id = {m.id: m for m in manifests}
        for m in manifests:
            origin = origins[m.id]
            pkg_locs = [(m.package, ("package",))] + [
                (v.package, ("variants", i, "package")) for i, v in enumerate(m.variants)
            ]
            for pkg, loc in pkg_locs:
                line = origin.line(*loc)
                if pkg in packages and not _distinct_entry_points(pkg, m, by_id[packages[pkg][0]]):
                    owner, owner_line = packages[pkg]
                    where = "this manifest" if owner == m.id else f"{origins[owner].path}:{owner_line}"
                    errors.append(
                        ConfigError(
                            f"package {pkg} is already listed by {where}",
                            "a package belongs to one app; remove the duplicate",
                            path=origin.path,
                            line=line,
                        )
                    )
                else:
                    packages.setdefault(pkg, (m.id, line))
            name_locs = [(m.name, ("name",))] + [(a, ("aliases", i)) for i, a in enumerate(m.aliases)]
            for name, loc in name_locs:
                key = normalise(name)
                line = origin.line(*loc)
                if not key:
                    errors.append(
                        ConfigError(
                            f"name {name!r} has no letters or digits",
                            "names are matched without spaces and punctuation; use a real name",
                            path=origin.path,
                            line=line,
                        )
                    )
                elif key in names:
                    owner, owner_name, owner_line = names[key]
                    where = "this manifest" if owner == m.id else f"{origins[owner].path}:{owner_line}"
                    errors.append(
                        ConfigError(
                            f"duplicate alias {name!r}: {owner_name!r} in {where} is the same name",
                            "names are compared ignoring case, width, spaces and punctuation; keep one",
                            path=origin.path,
                            line=line,
                        )
                    )
                else:
                    names[key] = (m.id, name, line)
        return errors


def _distinct_entry_points(package: str, one: AppManifest, other: AppManifest) -> bool:
    """Two apps may share a package only as two launcher activities of it (contacts and phone on some vendors)."""
    if one.id == other.id:
        return False
    first, second = one.launch_activity_for(package), other.launch_activity_for(package)
    return bool(first and second and first != second)
