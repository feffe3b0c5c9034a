"""The manifest schema: what we know about one app, as validated records.

One YAML file in ``apps/`` is one :class:`AppManifest`; files whose name starts with ``_`` hold
:class:`SharedRules` (popups and consequential buttons that any app can show).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from mobile_agent.apps.query.parser import parse_selector
from mobile_agent.apps.query.position import PositionError, check_expression
from mobile_agent.apps.query.syntax import SelectorError

CATEGORIES = (
    "ai",
    "browser",
    "education",
    "finance",
    "food",
    "health",
    "housing",
    "jobs",
    "lifestyle",
    "maps",
    "music",
    "news",
    "payment",
    "productivity",
    "reading",
    "shopping",
    "social",
    "system",
    "tools",
    "travel",
    "video",
)
Category = Literal[CATEGORIES]  # type: ignore[valid-type]

Vendor = Literal["aosp", "google", "xiaomi", "huawei", "honor", "oppo", "oneplus", "vivo", "samsung", "other"]
ConsequenceKind = Literal["pay", "transfer", "order", "delete", "send", "post", "call", "share", "security"]

_PACKAGE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


def _check_package(value: str) -> str:
    if not _PACKAGE_RE.match(value):
        raise ValueError(f"{value!r} is not an Android package name (like com.example.app)")
    return value


def _check_pattern(value: str | None) -> str | None:
    if value is not None:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"bad regular expression {value!r}: {exc}") from None
    return value


class Verification(_Strict):
    """One check of a package on a real phone, written by ``mobile-agent apps verify --write``."""

    package: str
    device: str  # ro.product.model
    android: str  # ro.build.version.release
    app_version: str | None = None  # versionName from dumpsys package
    launch_activity: str | None = None  # what `cmd package resolve-activity --brief` answered
    date: dt.date


class Source(_Strict):
    """Where the package name comes from. Never claims a device check that did not happen.

    ``refs`` cite public documents that name the package (repository path@commit, or a URL); a package is
    *confirmed* when it has a device check, a public list or at least one ref.
    """

    kind: Literal["public_list", "common_knowledge", "device"]
    lists: list[str] = Field(default_factory=list)  # e.g. UI-Venus, Open-AutoGLM
    refs: list[str] = Field(default_factory=list)
    note: str | None = None
    verified: list[Verification] = Field(default_factory=list)

    @model_validator(mode="after")
    def _lists_match_kind(self) -> Source:
        if self.kind == "public_list" and not self.lists:
            raise ValueError("kind public_list needs `lists` (which public tables name this package)")
        if self.kind == "device" and not self.verified:
            raise ValueError("kind device needs at least one `verified` entry")
        return self

    @property
    def confirmed(self) -> bool:
        return bool(self.verified or self.lists or self.refs)


class PackageVariant(_Strict):
    """The same app under another package name on some vendors' phones."""

    package: str
    vendors: list[Vendor] = Field(min_length=1)
    launch_activity: str | None = None

    _pkg = field_validator("package")(_check_package)


class DeepLink(_Strict):
    uri: str
    description: str | None = None


class ElementSelector(_Strict):
    """Picks view-tree nodes. Every field given must hold for the same node.

    ``text`` / ``content_desc`` / ``resource_id`` are exact (any of a list); ``*_pattern`` are regular expressions
    searched in the attribute; ``packages`` restricts the node's own package attribute; ``xpath`` is evaluated on
    the whole dump (uiautomator attribute names: ``@text``, ``@resource-id``, ``@content-desc``...).
    """

    text: list[str] | None = None
    text_pattern: str | None = None
    content_desc: list[str] | None = None
    content_desc_pattern: str | None = None
    resource_id: list[str] | None = None
    resource_id_pattern: str | None = None
    class_name: str | None = None
    packages: list[str] | None = None
    xpath: str | None = None

    @field_validator("text", "content_desc", "resource_id", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    _patterns = field_validator("text_pattern", "content_desc_pattern", "resource_id_pattern")(_check_pattern)

    @model_validator(mode="after")
    def _not_empty(self) -> ElementSelector:
        if not any(
            getattr(self, name) is not None
            for name in ("text", "text_pattern", "content_desc", "content_desc_pattern", "resource_id")
            + ("resource_id_pattern", "xpath")
        ):
            raise ValueError("a selector needs text, content_desc, resource_id (or a *_pattern) or xpath")
        return self


class Dismiss(_Strict):
    """How to get rid of a popup: tap the matched element, tap another element, or press back."""

    tap: Literal["matched"] | ElementSelector | None = None
    press: Literal["back"] | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Dismiss:
        if (self.tap is None) == (self.press is None):
            raise ValueError("dismiss needs exactly one of `tap` (matched or a selector) or `press: back`")
        return self


def _check_selector(value: str) -> str:
    try:
        parse_selector(value)
    except SelectorError as exc:
        raise ValueError(f"{exc} in {value!r}") from None
    return value


SelectorText = Annotated[str, AfterValidator(_check_selector)]


def _check_offset(value: str | float | None) -> str | float | None:
    if value is not None:
        try:
            check_expression(value)
        except PositionError as exc:
            raise ValueError(str(exc)) from None
    return value


Offset = Annotated[str | float | None, AfterValidator(_check_offset)]


class TapPosition(_Strict):
    """Where to tap relative to the target's box: one of left/right and one of top/bottom (pixel arithmetic)."""

    left: Offset = None
    right: Offset = None
    top: Offset = None
    bottom: Offset = None

    @model_validator(mode="after")
    def _one_per_axis(self) -> TapPosition:
        if (self.left is None) == (self.right is None) or (self.top is None) == (self.bottom is None):
            raise ValueError("position needs exactly one of left/right and one of top/bottom")
        return self


class PopupRule(_Strict):
    """A known popup and how to dismiss it.

    Either ``match`` (+ ``also``): field selectors, or ``selector``: selector strings (docs/popup-rules.md) that
    must all match, the tap going to the target of the last one; ``any_selector``: at least one must match
    (the first that does gives the target when there is no ``selector``). ``unless``: skip the rule when any
    of these matches. ``activities`` / ``not_activities``: prefixes of the foreground activity. ``after``: the
    rule may fire only right after one of these rule ids did (a chain). ``sources`` cite where the texts and
    ids come from.
    """

    id: str
    description: str | None = None
    match: ElementSelector | None = None
    also: list[ElementSelector] = Field(default_factory=list)
    selector: list[SelectorText] = Field(default_factory=list)
    any_selector: list[SelectorText] = Field(default_factory=list)
    unless: list[SelectorText] = Field(default_factory=list)
    activities: list[str] = Field(default_factory=list)
    not_activities: list[str] = Field(default_factory=list)
    position: TapPosition | None = None
    dismiss: Dismiss = Dismiss(tap="matched")
    after: list[str] = Field(default_factory=list)
    not_packages: list[str] = Field(default_factory=list)  # shared rules: apps that opted out
    sources: list[str] = Field(default_factory=list)

    @field_validator(
        "selector",
        "any_selector",
        "unless",
        "activities",
        "not_activities",
        "after",
        "sources",
        mode="before",
    )
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_way_to_match(self) -> PopupRule:
        uses_selectors = bool(self.selector or self.any_selector)
        if (self.match is None) == (not uses_selectors):
            raise ValueError("a popup rule needs either `match` or `selector` / `any_selector`, not both")
        if self.also and self.match is None:
            raise ValueError("`also` goes with `match`; with selectors, list them all under `selector`")
        if self.position is not None and self.dismiss.tap != "matched":
            raise ValueError(
                "`position` is relative to the matched target; use it with `dismiss: {tap: matched}`"
            )
        return self


class ConsequentialRule(_Strict):
    """A button (scope element) or a screen (scope screen: any node on it) whose action cannot be undone."""

    kind: ConsequenceKind
    scope: Literal["element", "screen"] = "element"
    text: list[str] | None = None
    text_pattern: str | None = None
    resource_id_pattern: str | None = None
    content_desc_pattern: str | None = None
    class_pattern: str | None = None
    description: str | None = None

    @field_validator("text", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    _patterns = field_validator(
        "text_pattern", "resource_id_pattern", "content_desc_pattern", "class_pattern"
    )(_check_pattern)

    @model_validator(mode="after")
    def _not_empty(self) -> ConsequentialRule:
        if not (self.text or self.text_pattern or self.resource_id_pattern or self.content_desc_pattern):
            raise ValueError(
                "a consequential rule needs text, text_pattern, resource_id_pattern or content_desc_pattern"
            )
        return self


class Walls(_Strict):
    login: bool = False  # most useful screens need an account
    captcha: bool = False  # slider / image captchas are common (automation cannot pass them)


class AppManifest(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_]*$")
    name: str = Field(min_length=1)  # the Chinese (or main display) name
    aliases: list[str] = Field(default_factory=list)
    package: str
    variants: list[PackageVariant] = Field(default_factory=list)
    launch_activity: str | None = None
    category: Category
    source: Source
    deep_links: list[DeepLink] = Field(default_factory=list)
    popups: list[PopupRule] = Field(default_factory=list)
    consequential: list[ConsequentialRule] = Field(default_factory=list)
    walls: Walls = Walls()
    hints: str | None = None

    _pkg = field_validator("package")(_check_package)

    @property
    def packages(self) -> list[str]:
        """Primary package first, then vendor variants (without repeats)."""
        out = [self.package]
        out += [v.package for v in self.variants if v.package not in out]
        return out

    def launch_activity_for(self, package: str) -> str | None:
        if package == self.package:
            return self.launch_activity
        return next((v.launch_activity for v in self.variants if v.package == package), None)

    @property
    def names(self) -> list[str]:
        return [self.name, *self.aliases]


class SharedRules(_Strict):
    """Rules any app can trigger (``apps/_common.yaml``): system permission dialogs, generic splash skips."""

    description: str | None = None
    popups: list[PopupRule] = Field(default_factory=list)
    consequential: list[ConsequentialRule] = Field(default_factory=list)
