"""mobile-agent: GUI vision-language models as agents on Android phones.

The library API the CLI itself uses::

    from mobile_agent import run_task, open_store, load_apps, parse_policy

    result = run_task("给张三发微信说晚上好", base_url="http://127.0.0.1:8000/v1",
                      safety=parse_policy(allow=["send@com.tencent.mm"]))
    with open_store() as store:
        steps = store.steps(result.episode_id)

Names are imported on first use, so `import mobile_agent` stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "run_task": ("mobile_agent.agent.runtime", "run_task"),
    "run_demo": ("mobile_agent.cli.demo", "run_demo"),
    "open_store": ("mobile_agent.store.store", "TrajectoryStore.open"),
    "TrajectoryStore": ("mobile_agent.store.store", "TrajectoryStore"),
    "load_apps": ("mobile_agent.apps.registry", "load_registry"),
    "AppRegistry": ("mobile_agent.apps.registry", "AppRegistry"),
    "parse_policy": ("mobile_agent.gate.policy", "parse_policy"),
    "SafetyPolicy": ("mobile_agent.gate.policy", "SafetyPolicy"),
    "Agent": ("mobile_agent.agent.loop", "Agent"),
    "AgentConfig": ("mobile_agent.agent.config", "AgentConfig"),
    "AndroidDevice": ("mobile_agent.device.android", "AndroidDevice"),
    "ModelClient": ("mobile_agent.model.client", "ModelClient"),
    "get_family": ("mobile_agent.model.families", "get_family"),
    "Action": ("mobile_agent.actions", "Action"),
    "Outcome": ("mobile_agent.actions", "Outcome"),
    "SimFarm": ("mobile_agent.sim.farm", "SimFarm"),
    "SimModelServer": ("mobile_agent.sim.servers.model_server", "SimModelServer"),
}

__all__ = [*_EXPORTS, "__version__"]


def __getattr__(name: str) -> Any:
    try:
        module_name, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'mobile_agent' has no attribute {name!r}") from None
    value: Any = import_module(module_name)
    for part in attribute.split("."):
        value = getattr(value, part)
    globals()[name] = value
    return value
