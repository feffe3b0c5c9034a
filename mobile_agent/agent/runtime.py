"""Library entry points that wire the parts together: run one task, run the demo.

The CLI calls exactly these functions; so can any Python program.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from mobile_agent.agent.loop import Agent, AgentConfig, EpisodeResult, StepEvent, UserChannel
from mobile_agent.device.android import AndroidDevice, choose_serial
from mobile_agent.model.families import get_family
from mobile_agent.model.client import ModelClient
from mobile_agent.agent.safety import PolicyAction, PolicyRule, SafetyPolicy
from mobile_agent.store.store import TrajectoryStore
from mobile_agent.verify.labels import Critic

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
DEFAULT_MODEL = "ui-venus-2"
DEFAULT_FAMILY = "ui-venus-2"
DEMO_SCENARIO = "wechat_send"
# The demo sends one WeChat message on a simulated phone: that send is allowed, everything else consequential asks.
DEMO_POLICY = SafetyPolicy(rules=(PolicyRule("send", PolicyAction.ALLOW, "com.tencent.mm"),))


def load_registry(apps_dir: str | Path | None = None):
    """The app registry, or None when manifests cannot be loaded (the loop then launches by package name)."""
    from mobile_agent.apps.registry import AppRegistry

    return AppRegistry.load(extra_dirs=[Path(apps_dir)] if apps_dir else ())


def run_task(
    task: str,
    *,
    device: str | None = None,
    adb: str | None = None,
    base_url: str | list[str] = DEFAULT_BASE_URL,
    model: str = DEFAULT_MODEL,
    family: str = DEFAULT_FAMILY,
    db: str | None = None,
    data_dir: str | Path | None = None,
    apps_dir: str | Path | None = None,
    config: AgentConfig | None = None,
    user: UserChannel | None = None,
    on_step: Callable[[StepEvent], None] | None = None,
    store: TrajectoryStore | None = None,
    client: ModelClient | None = None,
    safety: SafetyPolicy | None = None,
    critic: Critic | None = None,
) -> EpisodeResult:
    """Run one task on one phone until it ends; every step is recorded in the store.

    ``critic`` labels each proposed action before it runs and has the model re-propose a ``wrong`` one.

    ``safety`` overrides ``config.safety`` (default: ask before every consequential action; when ``user`` cannot
    answer, the episode pauses as needs_user and ``mobile_agent.agent.takeover.resume_episode`` continues it).
    """
    config = config or AgentConfig()
    if safety is not None:
        config = replace(config, safety=safety)
    adapter = get_family(family)
    serial = choose_serial(device, adb)
    if client is None:
        urls = [base_url] if isinstance(base_url, str) else list(base_url)
        client = ModelClient(urls, model)
    own_store = store is None
    store = store or TrajectoryStore.open(db, root=Path(data_dir) if data_dir else None)
    try:
        agent = Agent(
            AndroidDevice(serial, adb=adb),
            adapter,
            client,
            store,
            registry=load_registry(apps_dir),
            config=config,
            user=user,
            on_step=on_step,
            critic=critic,
        )
        return agent.run(task)
    finally:
        if own_store:
            store.close()


@dataclass(frozen=True)
class DemoResult:
    episode: EpisodeResult
    check_ok: bool
    check_detail: str
    serial: str
    store_location: str


def run_demo(
    *,
    scenario: str = DEMO_SCENARIO,
    family: str = DEFAULT_FAMILY,
    db: str | None = None,
    data_dir: str | Path | None = None,
    adb_port: int | None = None,
    on_step: Callable[[StepEvent], None] | None = None,
    safety: SafetyPolicy | None = DEMO_POLICY,
) -> DemoResult:
    """Start a simulated phone and the simulated model in-process and run the scenario's task end to end."""
    from mobile_agent.sim.farm import SimFarm
    from mobile_agent.sim.model_server import SimModelServer
    from mobile_agent.sim.scenario import load_scenario

    spec = load_scenario(scenario)
    with (
        SimFarm(1, scenario=scenario, adb_port=adb_port) as farm,
        SimModelServer(family=family, model_name=f"{family}-sim") as model_server,
    ):
        serial = farm.serials[0]
        store = TrajectoryStore.open(db, root=Path(data_dir) if data_dir else None)
        try:
            result = run_task(
                spec.task,
                device=serial,
                adb=f"127.0.0.1:{farm.adb_port}",
                base_url=model_server.base_url,
                model=model_server.model_name,
                family=family,
                store=store,
                on_step=on_step,
                safety=safety,
            )
            location = store.describe_location()
        finally:
            store.close()
        check = spec.check(farm.phones[serial])
        return DemoResult(result, check.ok, check.detail, serial, location)
