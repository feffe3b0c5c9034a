"""Write before you act: the loop commits a step's decided action as an ``intent`` (with its screenshot) before the
phone is touched; this module then touches the phone and completes the step as ``done`` or ``failed``.

A crash at any point leaves a store that says what may have happened: no row (nothing was done), ``intent`` (the
action may have happened), ``failed`` (acting raised; it may have partly happened), ``done``. A stop signal that
arrives while acting waits until the step is completed (mobile_agent.agent.interrupts.uninterrupted).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from mobile_agent.actions import Outcome
from mobile_agent.agent.interrupts import crash_point, uninterrupted
from mobile_agent.agent.step import StepDraft, step_record
from mobile_agent.device.android import AndroidDevice
from mobile_agent.errors import DeviceError, DeviceLost, MobileAgentError, ModelError, StoreError
from mobile_agent.store.intents import complete_step
from mobile_agent.store.outages import StoreUnavailable
from mobile_agent.store.owners import DONE, FAILED, INTENT
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.step_writes import FencedOut
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)


def commit_step(
    store: TrajectoryStore,
    device: AndroidDevice,
    episode_id: str,
    draft: StepDraft,
    t0: float | None,
    *,
    act: bool = False,
    package: str | None = None,
) -> None:
    """Record the step. With ``act``: as an intent, then perform ``draft.action`` and complete the step with what
    happened; a stop signal from the intent on waits until the step is completed."""
    obs = draft.observation
    record = replace(step_record(draft), status=INTENT if act else DONE)
    if not act:
        store.record_step(episode_id, record, screenshot=obs.screenshot, hierarchy=draft.hierarchy)
        return
    with uninterrupted():
        store.record_step(episode_id, record, screenshot=obs.screenshot, hierarchy=draft.hierarchy)
        crash_point("after_intent", draft.index)
        try:
            result = device.perform(draft.action, package=package, before=obs.screenshot)
        except BaseException as exc:
            _fail(store, episode_id, draft, exc)
            raise
        crash_point("after_act", draft.index)
        draft.timings["act"] = result.act_ms
        draft.timings["settle"] = result.settle_ms
        if t0 is not None:
            draft.timings["total"] = (time.perf_counter() - t0) * 1000
        complete_step(
            store,
            episode_id,
            draft.index,
            DONE,
            act_ms=result.act_ms,
            settle_ms=result.settle_ms,
            total_ms=draft.timings.get("total"),
        )
    crash_point("after_record", draft.index)


def _fail(store: TrajectoryStore, episode_id: str, draft: StepDraft, exc: BaseException) -> None:
    text = exc.one_line() if isinstance(exc, MobileAgentError) else f"{type(exc).__name__}: {exc}"
    if isinstance(exc, KeyboardInterrupt):
        text = "interrupted while acting"
    try:
        complete_step(store, episode_id, draft.index, FAILED, error_kind="act", error_text=text)
    except Exception:  # noqa: BLE001 - the intent row still says the action may have happened
        log.warning("could not record that step %d failed while acting", draft.index, exc_info=True)


def launch_package(registry: Any, installed: Callable[[], set[str]], app: str) -> tuple[str | None, str]:
    """The package to launch for ``app`` — through the registry when there is one, else the phone's own package
    of that name — or (None, the app as the model is told it is unknown, with suggestions)."""
    packages = installed()
    if registry is not None:
        try:
            return registry.resolve_launch(app, packages), ""
        except MobileAgentError as exc:
            suggestions = getattr(exc, "suggestions", None) or []
            return None, f"{app!r}" + (f"; did you mean: {', '.join(suggestions)}" if suggestions else "")
    return (app, "") if app in packages else (None, f"{app!r}")


def error_outcome(exc: MobileAgentError) -> Outcome:
    """How an episode that a runtime error stopped ends: error:device_lost, error:<the model's or the device's
    kind>; ``interrupted`` when the store refused its write because another worker holds it now (FencedOut) or
    stayed unreachable (StoreUnavailable: not the phone's fault, and nothing was done unrecorded); error:store for
    any other store fault (a full disk, a read-only file); else error:runtime."""
    if isinstance(exc, StoreError):
        fenced_or_away = isinstance(exc, (FencedOut, StoreUnavailable))
        return Outcome.INTERRUPTED if fenced_or_away else Outcome.error("store")
    if isinstance(exc, DeviceLost):
        return Outcome.error("device_lost")
    if isinstance(exc, ModelError):
        return Outcome.error(getattr(exc, "kind", "model"))
    if isinstance(exc, DeviceError):
        return Outcome.error(getattr(exc, "kind", "device"))
    return Outcome.error("runtime")


def finish_or_read(
    store: TrajectoryStore, episode_id: str, outcome: Outcome, detail: str | None, answer: str | None
) -> tuple[Outcome, str | None]:
    """End the episode; when another command already ended it (its owner was judged gone), keep what it says."""
    try:
        store.finish_episode(episode_id, outcome, detail=detail, answer=answer)
    except FencedOut as exc:  # another worker holds the episode now: its end is theirs to write
        log.warning("episode %s: %s", episode_id, exc.one_line())
        return Outcome.INTERRUPTED, exc.message
    except StoreError:
        try:
            info = store.episode(episode_id)
        except MobileAgentError:
            info = None
        if info is None or info.status is EpisodeStatus.RUNNING or info.outcome is None:
            raise
        log.warning("episode %s was already ended by another command: %s", episode_id, info.outcome_detail)
        return info.outcome, info.outcome_detail
    return outcome, detail


__all__ = ["commit_step", "error_outcome", "finish_or_read", "launch_package"]
