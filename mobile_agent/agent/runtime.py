"""Library entry points that wire the parts together: run one task, resume a paused episode.

The CLI calls exactly these functions; so can any Python program::

    result = run_task("给张三发微信说晚上好", base_url="http://127.0.0.1:8000/v1")
    result = resume_episode("3f9a0c", reply="yes")        # the library side of `mobile-agent resume`
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from mobile_agent.agent.config import AgentConfig, EpisodeResult, StepEvent, UserChannel
from mobile_agent.agent.loop import Agent
from mobile_agent.agent.phone_hold import PhoneHold
from mobile_agent.device.android import AndroidDevice, choose_serial
from mobile_agent.errors import UserError
from mobile_agent.gate.policy import SafetyPolicy
from mobile_agent.model.client import ModelClient
from mobile_agent.model.families import get_family
from mobile_agent.store.pauses import open_pause
from mobile_agent.store.store import TrajectoryStore

if TYPE_CHECKING:
    from mobile_agent.apps.registry import AppRegistry
    from mobile_agent.verify.labels import Critic

log = logging.getLogger(__name__)


def load_registry(apps_dir: str | Path | None = None) -> AppRegistry:
    """The app registry: the shipped manifests plus those in ``apps_dir``. Raises ConfigError on a bad manifest."""
    from mobile_agent.apps.registry import AppRegistry

    return AppRegistry.load(extra_dirs=[Path(apps_dir)] if apps_dir else ())


def run_task(
    task: str,
    *,
    device: str | None = None,
    adb: str | None = None,
    base_url: str | list[str] | None = None,
    model: str | None = None,
    family: str | None = None,
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
    force: bool = False,
    stop_u2_server: bool = False,
) -> EpisodeResult:
    """Run one task on one phone until it ends; every step is recorded in the store.

    The phone is leased in the store while the episode runs: a phone another live process holds is refused
    (UserError naming the holder) unless ``force``; a lease whose process is gone is taken over. A run whose phone
    is taken over (another run with ``force``) stops before it touches the phone again: its episode ends as
    ``interrupted``, naming who has the phone, and EpisodeStopped (a KeyboardInterrupt) is raised as for Ctrl-C.

    ``critic`` labels each proposed action before it runs and has the model re-propose a ``wrong`` one.

    The phone's uiautomator2 server keeps running after the run (the next one reuses it) unless ``stop_u2_server``.

    ``safety`` overrides ``config.safety`` (default: ask before every consequential action; when ``user`` cannot
    answer, the episode pauses as needs_user and :func:`resume_episode` continues it).

    An argument left out comes from the settings (mobile_agent/settings): the environment (MOBILE_AGENT_BASE_URL,
    MOBILE_AGENT_MODEL, MOBILE_AGENT_FAMILY, MOBILE_AGENT_ADB, ANDROID_SERIAL, ...), then the config file.
    """
    if not task.strip():
        raise UserError("the task is empty", 'say what the agent should do: mobile-agent run "打开设置"')
    config = config or AgentConfig()
    if safety is not None:
        config = replace(config, safety=safety)
    from mobile_agent.settings.values import load_settings  # lazy: not needed by `--help`

    urls = [base_url] if isinstance(base_url, str) else base_url
    settings = load_settings(device=device, adb=adb, base_url=urls, model=model, family=family, db=db)
    adb, apps_dir = settings.adb, apps_dir or settings.apps_dir
    adapter = get_family(settings.family)
    if (
        client is None
    ):  # first: a malformed base URL is the caller's mistake, said before any phone is looked for
        client = ModelClient(settings.base_url, settings.model)
    serial = choose_serial(settings.device, adb)
    own_store = store is None
    store = store or TrajectoryStore.open(settings.db, root=Path(data_dir) if data_dir else None)
    try:
        phone = AndroidDevice(serial, adb=adb)
        hold = PhoneHold(store, serial, adb, force=force)
        agent = Agent(
            phone,
            adapter,
            client,
            store,
            registry=load_registry(apps_dir),
            config=config,
            user=user,
            on_step=on_step,
            critic=critic,
            stop=hold.lost,
        )
        with hold:
            client.prepare()  # the SDK's import overlaps the phone's first screenshot instead of preceding it
            try:
                return agent.run(task)
            finally:
                if stop_u2_server and not hold.lost.is_set():  # a phone taken over is not ours to touch
                    phone.stop_server()
    finally:
        if own_store:
            store.close()


def resume_episode(
    episode: str,
    *,
    reply: str | None = None,
    db: str | None = None,
    data_dir: str | Path | None = None,
    device: str | None = None,
    adb: str | None = None,
    base_url: str | list[str] | None = None,
    model: str | None = None,
    family: str | None = None,
    apps_dir: str | Path | None = None,
    safety: SafetyPolicy | None = None,
    user: UserChannel | None = None,
    on_step: Callable[[StepEvent], None] | None = None,
    store: TrajectoryStore | None = None,
) -> EpisodeResult:
    """Continue a paused episode on the phone it ran on, with the model and settings it ran with.

    ``reply`` answers the question it paused on (yes/no for a confirmation, any text for a call-user); every other
    argument overrides what the pause recorded. UserError when the episode is not paused. The phone is leased as
    for :func:`run_task`, and a resume whose phone is taken over stops the same way.
    """
    own_store = store is None
    store = store or TrajectoryStore.open(db, root=Path(data_dir) if data_dir else None)
    try:
        info = store.episode(episode)
        pause = open_pause(store, info.id)
        if pause is None:
            raise UserError(
                f"episode {info.id} is not waiting for a person ({info.outcome or info.status})",
                "only an episode that paused as needs_user can be resumed; see `mobile-agent episodes`",
            )
        context = pause.context
        config = AgentConfig.from_snapshot(context.get("config", {}))
        if safety is not None:
            config = replace(config, safety=safety)
        urls = base_url if base_url is not None else context.get("base_urls") or []
        urls = [urls] if isinstance(urls, str) else list(urls)
        if not urls:
            raise UserError("the pause does not say which model endpoint to use", "pass --base-url")
        serial = device or pause.device
        client = ModelClient(urls, model or context.get("model") or info.model)
        hold = PhoneHold(store, serial, adb if adb is not None else pause.adb_server)
        agent = Agent(
            AndroidDevice(serial, adb=adb if adb is not None else pause.adb_server),
            get_family(family or context.get("family") or info.family),
            client,
            store,
            registry=load_registry(apps_dir),
            config=config,
            user=user,
            on_step=on_step,
            stop=hold.lost,
        )
        with hold:
            client.prepare()
            return agent.resume(info.id, reply)
    finally:
        if own_store:
            store.close()


__all__ = ["load_registry", "resume_episode", "run_task"]
