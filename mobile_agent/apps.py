"""App knowledge: manifests (apps/*.yaml), name resolution, popup rules and consequential buttons.

    >>> from mobile_agent.apps import load_registry
    >>> registry = load_registry()            # shipped manifests + $MOBILE_AGENT_APPS
    >>> registry.resolve(" wechat ").package
    'com.tencent.mm'
    >>> registry.resolve_launch("美团外卖", {"com.sankuai.meituan.takeoutnew"})
    'com.sankuai.meituan.takeoutnew'

The implementation lives in :mod:`mobile_agent.appknowledge`; this module is the stable import path.
"""

from mobile_agent.appknowledge.names import normalise
from mobile_agent.appknowledge.registry import (
    APPS_DIR_ENV,
    AppNotInstalled,
    AppRegistry,
    LaunchTarget,
    PopupMatch,
    UnknownApp,
    check_dirs,
    load_registry,
    shipped_apps_dir,
)
from mobile_agent.appknowledge.schema import (
    CATEGORIES,
    AppManifest,
    ConsequentialRule,
    ElementSelector,
    PopupRule,
    SharedRules,
    Source,
    Verification,
)
from mobile_agent.appknowledge.viewtree import Element, ViewTree

__all__ = [
    "APPS_DIR_ENV",
    "CATEGORIES",
    "AppManifest",
    "AppNotInstalled",
    "AppRegistry",
    "LaunchTarget",
    "ConsequentialRule",
    "Element",
    "ElementSelector",
    "PopupMatch",
    "PopupRule",
    "SharedRules",
    "Source",
    "UnknownApp",
    "Verification",
    "ViewTree",
    "check_dirs",
    "load_registry",
    "normalise",
    "shipped_apps_dir",
]
