"""The agent runner: a claimed task as an agent episode on a real (or simulated) phone, with model clients shared by
every worker of the process (a cap on requests in flight per endpoint, and optionally one across all of them)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mobile_agent.errors import DeviceError, MobileAgentError
from mobile_agent.farm.inventory import PhoneEntry
from mobile_agent.farm.scheduler.jobs import Job, JobResult, outcome_failure
from mobile_agent.farm.scheduler.policy import EpisodePolicies
from mobile_agent.farm.scheduler.prior import asking_for, consequential_kinds, prior_steps
from mobile_agent.farm.tasks import ResetMode
from mobile_agent.gate.policy import SafetyPolicy
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelSettings:
    """The model endpoint(s) a pool uses. A task may override ``model`` and ``family``."""

    base_urls: tuple[str, ...]
    model: str
    family: str = "ui-venus-2"
    api_key: str | None = None
    per_endpoint_in_flight: int = 4
    global_in_flight: int | None = None  # across every endpoint and model of this process
    timeout_s: float = 120.0
    max_retries: int = 4
    backoff_s: float = 0.5
    max_backoff_s: float = 8.0


@dataclass(frozen=True)
class EpisodeDefaults:
    max_steps: int = 30
    timeout_s: float = 600.0
    reset: ResetMode = ResetMode.HOME
    reserve_s: float = 300.0  # how long a paused (needs_user) episode keeps its phone for a person
    reconnect_wait_s: float = 60.0  # how long a phone that left the adb bus is waited for (agent/blinks.py)


class CappedClient:
    """A ModelClient behind a process-wide cap on requests in flight (the per-endpoint cap is the client's)."""

    def __init__(self, client: Any, cap: threading.Semaphore | None) -> None:
        self._client = client
        self._cap = cap

    @property
    def model(self) -> str:
        return self._client.model

    @property
    def base_urls(self) -> list[str]:
        return list(self._client.endpoints)

    @property
    def endpoints(self) -> list[str]:
        return list(self._client.endpoints)

    def complete(
        self, messages: list[dict[str, Any]], *, episode_id: str | None = None, **options: Any
    ) -> Any:
        if self._cap is None:
            return self._client.complete(messages, episode_id=episode_id, **options)
        with self._cap:
            return self._client.complete(messages, episode_id=episode_id, **options)

    def submit(
        self, messages: list[dict[str, Any]], *, episode_id: str | None = None, deadline: Any = None
    ) -> Any:
        return self._client.submit(messages, episode_id=episode_id, deadline=deadline, hold=self._cap)

    def take_unused(self, episode_id: str) -> int:
        return self._client.take_unused(episode_id)

    def restore_unused(self, episode_id: str, count: int) -> None:
        self._client.restore_unused(episode_id, count)

    def probe(self) -> list[Any]:
        return self._client.probe()

    def close(self) -> None:
        self._client.close()


PhoneStateSource = Callable[[PhoneEntry], Mapping[str, Any] | None]


class AgentRunner:
    """Runs a claimed task as an agent episode on a real (or simulated) phone, with the shared model clients."""

    def __init__(
        self,
        store: TrajectoryStore,
        model: ModelSettings,
        *,
        defaults: EpisodeDefaults | None = None,
        apps_dir: str | Path | None = None,
        registry: Any = None,
        phone_state: PhoneStateSource | None = None,
        safety: SafetyPolicy | None = None,
    ) -> None:
        self.store = store
        self.model = model
        self.defaults = defaults or EpisodeDefaults()
        self.apps_dir = apps_dir
        self._registry = registry
        self.phone_state = phone_state
        self.policies = EpisodePolicies(store, safety)
        self._cap = threading.BoundedSemaphore(model.global_in_flight) if model.global_in_flight else None
        self._clients: dict[str, CappedClient] = {}
        self._devices: dict[str, Any] = {}
        self._lock = threading.RLock()

    @property
    def registry(self) -> Any:
        with self._lock:
            if self._registry is None:
                from mobile_agent.agent.runtime import load_registry

                self._registry = load_registry(self.apps_dir)
            return self._registry

    def client(self, model_name: str | None = None) -> CappedClient:
        from mobile_agent.model.client import ModelClient

        name = model_name or self.model.model
        with self._lock:
            if name not in self._clients:
                m = self.model
                raw = ModelClient(
                    list(m.base_urls),
                    name,
                    api_key=m.api_key,
                    timeout=m.timeout_s,
                    max_retries=m.max_retries,
                    max_in_flight=m.per_endpoint_in_flight,
                    backoff_s=m.backoff_s,
                    max_backoff_s=m.max_backoff_s,
                )
                self._clients[name] = CappedClient(raw, self._cap)
            return self._clients[name]

    def probe_endpoint(self) -> str | None:
        """None when at least one endpoint answers GET /models; else what went wrong."""
        statuses = self.client().probe()
        if any(status.ok for status in statuses):
            return None
        return "; ".join(f"{s.base_url}: {s.error}" for s in statuses) or "no endpoint"

    def close(self) -> None:
        for client in self._clients.values():
            client.close()

    def run(self, job: Job) -> JobResult:
        from mobile_agent.agent.config import AgentConfig, NoUser
        from mobile_agent.agent.loop import Agent
        from mobile_agent.device.android import AndroidDevice
        from mobile_agent.model.base import PromptOptions
        from mobile_agent.model.families import get_family
        from mobile_agent.settings.values import load_settings

        claim, spec = job.claim, job.claim.spec
        family = get_family(spec.get("family") or self.model.family)
        client = self.client(spec.get("model"))
        # One device object per phone across episodes: its u2 connection is set up once, not per episode.
        with self._lock:
            device = self._devices.pop(job.phone.key, None) or AndroidDevice(
                job.phone.serial, adb=job.phone.adb
            )
        self._reset(device, ResetMode(spec.get("reset") or self.defaults.reset), claim.app)
        policy = self.policies.for_task(claim.run_id, spec)
        prior = prior_steps(self.store, claim)  # what an earlier attempt may have done already
        kinds = consequential_kinds(prior)  # an unknown harmless tap asks nothing
        told = self._told_by_phone(device, job.phone, spec.get("check")) if kinds else None
        if told is True:  # the phone shows the task done: nothing is done again
            return self._done_before(job, device, policy, prior, kinds)
        if told is None:  # the phone cannot tell: ask before those kinds happen again, only those
            policy = asking_for(policy, kinds)
        effects = [step.describe() for step in prior]
        frames = load_settings()  # history_scale / history_quality: cheaper history screenshots
        config = AgentConfig(
            max_steps=int(spec.get("max_steps") or self.defaults.max_steps),
            timeout_s=float(spec.get("timeout") or self.defaults.timeout_s),
            safety=policy,
            reserve_s=self.defaults.reserve_s,
            reconnect_wait_s=self.defaults.reconnect_wait_s,
            prompt=PromptOptions(
                history_image_scale=frames.history_scale, history_image_quality=frames.history_quality
            ),
        )
        meta = _episode_meta(job, policy, effects)
        agent = Agent(
            device,
            family,
            client,
            self.store,
            registry=self.registry,
            config=config,
            user=NoUser(),
            on_step=lambda event: job.on_step(event.index, event.episode_id),
        )
        result = agent.run(claim.task, run_id=claim.run_id, app=claim.app, meta=meta)
        if outcome_failure(result.outcome) is None:
            if spec.get("check"):
                self._verify(device, job.phone, result.episode_id, spec["check"])
            with self._lock:
                self._devices[job.phone.key] = device  # kept only while the phone behaves
        return JobResult(result.episode_id, str(result.outcome), result.detail, result.steps)

    def _told_by_phone(self, device: Any, phone: PhoneEntry, check: Mapping[str, Any] | None) -> bool | None:
        """Whether the phone's state shows the task's check complete (True), shows none of it (False: the
        uncertain action had no effect), or cannot tell (None: no check, no phone state, or only partly)."""
        if not check or self.phone_state is None:
            return None
        try:
            from mobile_agent.verify.checks import TaskCheck, run_checks
            from mobile_agent.verify.verdict import Verdict

            state = self.phone_state(phone)
            if state is None:
                return None
            package, activity = device.foreground()
            found = run_checks(
                TaskCheck.parse(dict(check)),
                final_hierarchy=device.hierarchy(),
                final_package=package,
                final_activity=activity,
                phone_state=state,
            )
        except Exception as exc:  # noqa: BLE001 - then the phone cannot tell, and the retry asks
            log.warning("could not read the phone's state before a retry: %s", exc)
            return None
        if not found.authoritative:
            return None
        return {Verdict.COMPLETE: True, Verdict.FAILED: False}.get(found.verdict)  # type: ignore[arg-type]

    def _done_before(
        self, job: Job, device: Any, policy: SafetyPolicy, prior: list[Any], kinds: list[str]
    ) -> JobResult:
        """An episode that records the task as finished by an earlier attempt, as the phone's state shows."""
        from mobile_agent.actions import Outcome

        claim = job.claim
        detail = (
            f"done by an earlier attempt: its {', '.join(kinds)} went through, as the task's check shows on the "
            "phone's state; nothing was done again"
        )
        meta = _episode_meta(job, policy, [step.describe() for step in prior])
        meta["resolved_from_phone_state"] = True
        family = claim.spec.get("family") or self.model.family
        model = claim.spec.get("model") or self.model.model
        episode = self.store.start_episode(
            claim.task,
            device=job.phone.serial,
            family=family,
            model=model,
            run_id=claim.run_id,
            app=claim.app,
            meta=meta,
        )
        self.store.finish_episode(episode.id, Outcome.FINISHED, detail=detail)
        self._verify(device, job.phone, episode.id, claim.spec["check"])
        with self._lock:
            self._devices[job.phone.key] = device
        return JobResult(episode.id, str(Outcome.FINISHED), detail, 0)

    def resume(
        self,
        phone: PhoneEntry,
        episode_id: str,
        reply: str | None,
        on_step: Callable[[int, str], None],
        *,
        check: Mapping[str, Any] | None = None,
    ) -> JobResult:
        """Continue a paused episode on the phone it paused on, with the settings it ran with and a person's
        reply (mobile_agent.farm.scheduler.holds); its task's check runs when it ends by the agent."""
        from mobile_agent.agent.config import AgentConfig, NoUser
        from mobile_agent.agent.loop import Agent
        from mobile_agent.device.android import AndroidDevice
        from mobile_agent.model.families import get_family
        from mobile_agent.store.pauses import open_pause

        info = self.store.episode(episode_id)
        pause = open_pause(self.store, info.id)
        context = pause.context if pause is not None else {}
        with self._lock:
            device = self._devices.pop(phone.key, None) or AndroidDevice(phone.serial, adb=phone.adb)
        agent = Agent(
            device,
            get_family(context.get("family") or info.family),
            self.client(context.get("model") or info.model),
            self.store,
            registry=self.registry,
            config=AgentConfig.from_snapshot(context.get("config", {})),
            user=NoUser(),
            on_step=lambda event: on_step(event.index, event.episode_id),
        )
        result = agent.resume(info.id, reply)
        if outcome_failure(result.outcome) is None:
            if check:
                self._verify(device, phone, result.episode_id, check)
            with self._lock:
                self._devices[phone.key] = device
        return JobResult(result.episode_id, str(result.outcome), result.detail, result.steps)

    def _reset(self, device: Any, mode: ResetMode, app: str | None) -> None:
        if mode is ResetMode.NONE:
            return
        package = self._package(device, app) if app and mode is not ResetMode.HOME else None
        if package and mode is ResetMode.FORCE_STOP:
            _adb_shell(device, ["am", "force-stop", package])
        elif package and mode is ResetMode.CLEAR:
            _adb_shell(device, ["pm", "clear", package])
        _adb_shell(device, ["input", "keyevent", "KEYCODE_HOME"])

    def _package(self, device: Any, app: str) -> str | None:
        try:
            return self.registry.resolve_launch(app, device.installed_packages())
        except DeviceError:
            raise
        except MobileAgentError as exc:
            log.warning("reset: cannot tell the package of %r (%s); only going home", app, exc.one_line())
            return None

    def _verify(self, device: Any, phone: PhoneEntry, episode_id: str, check: Mapping[str, Any]) -> None:
        """Run the task's check while the phone still shows the end of the episode. Never fails the task."""
        try:
            from mobile_agent.verify.checks import TaskCheck
            from mobile_agent.verify.service import run_and_record_checks
        except ImportError:
            return
        try:
            package, activity = device.foreground()
            state = self.phone_state(phone) if self.phone_state is not None else None
            run_and_record_checks(
                self.store,
                episode_id,
                TaskCheck.parse(dict(check)),
                final_hierarchy=device.hierarchy(),
                final_package=package,
                final_activity=activity,
                phone_state=state,
            )
        except Exception as exc:  # noqa: BLE001 - an unverified episode is reported as such, not lost
            log.warning("check of episode %s could not run: %s", episode_id, exc)


def _episode_meta(job: Job, policy: SafetyPolicy, effects: list[str]) -> dict[str, Any]:
    """What a farm episode records about its task: the queue task and attempt, who ran it where, the safety
    policy, the task's check and what earlier attempts may have done."""
    claim = job.claim
    meta: dict[str, Any] = {
        "queue_task": claim.task_id,
        "attempt": claim.attempt,
        "worker": job.worker,
        "label": claim.label,
        "phone": job.phone.key,
        "safety": policy.describe(),
    }
    if claim.spec.get("check"):
        meta["check"] = claim.spec["check"]
    if effects:
        meta["prior_effects"] = effects
    return meta


def _adb_shell(device: Any, args: list[str]) -> str:
    """A shell command on the phone (argument list, never a string built from text); adb trouble -> DeviceLost."""
    import adbutils

    from mobile_agent.errors import DeviceLost

    try:
        return device.adb.shell(args, timeout=30)
    except (adbutils.AdbError, adbutils.AdbTimeout, OSError) as exc:
        raise DeviceLost(
            f"phone {device.serial}: {' '.join(args[:2])} failed: {exc}", "reconnect it"
        ) from None
