"""What a person does on a phone from the console's live page, written to the store.

A control session is an episode of its own (task ``live control of SERIAL``, family ``human``, model ``console``,
``meta.live`` naming who held control); every remote action is one of its steps, with source ``human``, the frame
the person acted on as its screenshot (the action drawn on it by reports and the console), and who held control as
its thought. Replay, ``show``, reports and exports read it like any other trajectory. Text typed on a secure
(FLAG_SECURE) screen is recorded as its length only: such screens hold passwords.

Nothing here changes the store's schema: it uses start_episode / record_step / finish_episode.
"""

from __future__ import annotations

import threading
import time

from mobile_agent.actions import Action, ActionKind, Outcome, Size
from mobile_agent.console.live import Control, Frame
from mobile_agent.store.owners import Heartbeat
from mobile_agent.store.records import ActionSource, StepRecord, StepTimings
from mobile_agent.store.store import TrajectoryStore

FAMILY, MODEL = "human", "console"


def live_task(serial: str) -> str:
    return f"live control of {serial}"


class LiveRecorder:
    def __init__(self, store: TrajectoryStore) -> None:
        self.store = store
        self._beats: dict[str, Heartbeat] = {}
        self._lock = threading.Lock()

    def start(self, serial: str, key: str, control: Control) -> str:
        """The session's episode; one taking over a paused episode names it in ``meta.live.takeover``
        (``source_episode_id`` stays for replays)."""
        live = {"controller": control.who, "phone": key}
        if control.takeover is not None:
            live["takeover"] = control.takeover
        info = self.store.start_episode(
            live_task(serial),
            device=serial,
            family=FAMILY,
            model=MODEL,
            meta={"live": live},
        )
        control.episode_id = info.id
        beat = Heartbeat(self.store, info.id).start()
        with self._lock:
            self._beats[info.id] = beat
        return info.id

    def step(
        self,
        control: Control,
        action: Action,
        *,
        before: Frame | None,
        screen: Size | None,
        app: str | None,
        started: float,
        act_ms: float,
        error: str | None = None,
    ) -> None:
        if control.episode_id is None:
            return
        secure = before is not None and before.secure
        recorded = action
        if secure and action.kind is ActionKind.TYPE:
            recorded = Action.type("*" * len(action.text or ""))
        thought = f"{control.who} (live control)"
        if secure:
            thought += "; on a secure screen: the phone shows it black, typed text is not recorded"
        self.store.record_step(
            control.episode_id,
            StepRecord(
                control.steps,
                recorded,
                action_source=ActionSource.HUMAN,
                started_at=started,
                ended_at=time.time(),
                screen=screen,
                foreground_app=app,
                thought=thought,
                timings=StepTimings(act_ms=act_ms, total_ms=(time.time() - started) * 1000),
                error_kind="device" if error else None,
                error_text=error,
            ),
            screenshot=before.jpeg if before is not None else None,
        )
        control.steps += 1
        control.done.append(recorded.describe() + (f" (failed: {error})" if error else ""))

    def end(self, control: Control, why: str) -> None:
        if control.episode_id is None:
            return
        with self._lock:
            beat = self._beats.pop(control.episode_id, None)
        if beat is not None:
            beat.stop()
        self.store.finish_episode(
            control.episode_id,
            Outcome.INTERRUPTED,
            detail=f"live control by {control.who} ended: {why}; {control.steps} action(s) from the console",
        )


__all__ = ["FAMILY", "MODEL", "LiveRecorder", "live_task"]
