"""A phone driven by the calling agent through the device tools: its lease, its episode, and each call as a step.

The first device call on a phone (or ``hold_phone``) leases it as ``mobile-agent run`` does (a phone a worker, a run
or a person holds is refused, naming the holder) and starts an episode. Every acting call is then one step of that
episode with source ``mcp``, recorded with the screenshot it was judged on and the view tree: the frame is taken,
the action passes the same guards as ``run`` (validity, the safety gate with the server's policy, loops), and only
an allowed action reaches the phone, written as an intent first (mobile_agent.agent.acting). An action the gate
asks about waits for a person's answer (mobile_agent.mcp.consent); the calling model never answers it.

    drive = Drive.open(store, "emulator-5554", adb, registry=registry, policy=policy, client="claude")
    proposal = drive.propose(Action.tap(500, 409))      # capture + guards
    drive.act(proposal)                                  # or drive.refuse(proposal, ...)
    drive.end("finished", "released by the client")
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from mobile_agent.actions import Action, ActionKind, Outcome, Size
from mobile_agent.agent.acting import commit_step, launch_package
from mobile_agent.agent.loops import LoopDetector, LoopGuard
from mobile_agent.agent.phone_hold import PhoneHold
from mobile_agent.agent.recheck import stale_step
from mobile_agent.agent.step import StepDraft, device_frame
from mobile_agent.device.android import AndroidDevice, Capture
from mobile_agent.errors import UserError
from mobile_agent.gate.gate import SafetyGate
from mobile_agent.gate.guard import Decision, Guard, GuardContext, ValidityGuard, Verdict, run_guards
from mobile_agent.gate.policy import SafetyPolicy
from mobile_agent.screen.imagehash import dhash
from mobile_agent.store.owners import Heartbeat, claim_episode
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)
SOURCE = "mcp"
RECHECK_AFTER_S = 3.0


@dataclass
class Proposal:
    """One acting call, judged: the draft step, the frame's hash, and the guards' objection if any."""

    draft: StepDraft
    screen_hash: int
    package: str | None  # the package a launch opens
    blocked: Decision | None
    asked: Decision | None
    started: float


class Drive:
    """One phone under a calling agent: the lease, the episode, the guards, the step counter."""

    def __init__(
        self,
        store: TrajectoryStore,
        hold: PhoneHold,
        device: AndroidDevice,
        episode_id: str,
        guards: list[Guard],
        loops: LoopDetector,
        registry: Any,
    ) -> None:
        self.store = store
        self.hold = hold
        self.device = device
        self.episode_id = episode_id
        self.guards = guards
        self.loops = loops
        self.registry = registry
        self.task = store.episode(episode_id).task
        self.index = 0
        self.ended = False
        self._heartbeat = Heartbeat(store, episode_id).start()

    @classmethod
    def open(
        cls,
        store: TrajectoryStore,
        serial: str,
        adb: str | None,
        *,
        registry: Any,
        policy: SafetyPolicy,
        client: str,
        task: str | None = None,
    ) -> Drive:
        hold = PhoneHold(store, serial, adb).acquire()  # UserError naming the holder when it is busy
        try:
            device = AndroidDevice(serial, adb=adb)
            episode = store.start_episode(
                task or "driven by an MCP client",
                device=serial,
                family=SOURCE,
                model=client,
                meta={"source": SOURCE, "safety": policy.describe(), "phone": hold.key},
            )
        except BaseException:
            hold.release()
            raise
        loops = LoopDetector()
        guards: list[Guard] = [ValidityGuard(), SafetyGate(policy, registry), LoopGuard(loops)]
        return cls(store, hold, device, episode.id, guards, loops, registry)

    # --- looking --------------------------------------------------------------------------------------------
    def capture(self) -> Capture:
        self.check()
        return self.device.capture(1.0)

    def check(self) -> None:
        if self.ended:
            raise UserError(f"episode {self.episode_id} has ended", "the next device call starts a new one")
        if self.hold.lost.is_set():  # another process took the phone over: nothing more is done on it
            reason = self.hold.lost.reason
            self.end(str(Outcome.INTERRUPTED), reason)
            raise UserError(reason, "hold another phone, or wait until this one is free (list_phones)")

    # --- one acting call ------------------------------------------------------------------------------------
    def propose(self, action: Action, why: str = "") -> Proposal:
        """The frame now and the guards' word on ``action`` there (nothing is done yet)."""
        started = time.perf_counter()
        capture = self.capture()
        obs = capture.observation()
        draft = StepDraft(self.index, time.time(), obs, source=SOURCE)
        draft.action, draft.thought = action, why.strip()
        draft.hierarchy = capture.screen().hierarchy
        screen_hash = dhash(obs.screenshot, self.loops.config.hash_size)
        if obs.secure:
            reason = "the phone shows a secure screen (payment or password): a person must act on the phone"
            secure = Decision("safety", Verdict.BLOCK, reason, kind="secure_screen", source="screen")
            draft.decisions.append(secure)
            return Proposal(draft, screen_hash, None, secure, None, started)
        package = None
        if action.kind is ActionKind.LAUNCH:
            package, unknown = launch_package(self.registry, self.device.installed_packages, action.app or "")
            if package is None:
                raise UserError(f"there is no app called {unknown}", "give the app's name or its package")
        ctx = GuardContext(
            self.task,
            action,
            Size(*obs.size),
            obs.package,
            draft.index,
            thought=draft.thought,
            screen_hash=screen_hash,
            hierarchy_source=lambda: draft.hierarchy,
            screenshot_source=lambda: device_frame(obs),
        )
        decisions = run_guards(self.guards, ctx)
        draft.decisions.extend(decisions)
        blocked = next((d for d in decisions if d.verdict is Verdict.BLOCK), None)
        asked = next((d for d in decisions if d.verdict is Verdict.ASK), None)
        return Proposal(draft, screen_hash, package, blocked, asked, started)

    def step(self, action: Action, why: str = "") -> tuple[Proposal, dict[str, Any] | None]:
        """Propose, then act when the guards allow it (one call: one thread hop for the common case). A blocked
        step is recorded here; an asked one is left to the caller, who puts it to the person."""
        proposal = self.propose(action, why)
        if proposal.blocked is not None:
            self.refuse(proposal)
            return proposal, None
        if proposal.asked is not None:
            return proposal, None
        return proposal, self.act(proposal)

    def act(self, proposal: Proposal, approval: Decision | None = None) -> dict[str, Any]:
        """Do the allowed action unless the phone moved on from the judged screen; record the step either way."""
        self.check()
        draft = proposal.draft
        if approval is not None:
            draft.decisions.append(approval)
        correction = stale_step(self.device, draft.hierarchy, draft, RECHECK_AFTER_S)
        if correction is not None:
            self._record(proposal, act=False)
            raise UserError(
                "not done: the screen changed after it was judged (" + (draft.error or "stale") + ")",
                "look at the phone again (screenshot) and repeat the call if it still applies",
            )
        self._heartbeat.beat()
        self._record(proposal, act=True)
        self.loops.note(proposal.screen_hash, draft.action)
        return {
            "episode_id": self.episode_id,
            "step": draft.index,
            "done": draft.action.describe(),
            "foreground": draft.observation.package,
            "decisions": [d.to_dict() for d in draft.decisions if d.verdict is not Verdict.ALLOW or d.kind],
        }

    def approved(self, proposal: Proposal) -> Proposal:
        """The step a person approved from the inbox, on the screen as it is now (the asked step is recorded):
        the same action when the phone still shows the screen they were asked about; else UserError."""
        capture = self.capture()
        obs = capture.observation()
        screen_hash = dhash(obs.screenshot, self.loops.config.hash_size)
        if not self.loops.same_screen(proposal.screen_hash, screen_hash):
            raise UserError(
                "not done: the screen changed while the person was asked",
                "look at the phone again (screenshot) and repeat the call if it still applies",
            )
        draft = StepDraft(self.index, time.time(), obs, source=SOURCE)
        draft.action, draft.thought = proposal.draft.action, proposal.draft.thought
        draft.hierarchy = capture.screen().hierarchy
        return Proposal(draft, screen_hash, proposal.package, None, None, time.perf_counter())

    def refuse(self, proposal: Proposal, decision: Decision | None = None) -> None:
        """Record the step the guards (or the person) stopped, without touching the phone."""
        if decision is not None:
            proposal.draft.decisions.append(decision)
        self._record(proposal, act=False)

    def _record(self, proposal: Proposal, *, act: bool) -> None:
        draft = proposal.draft
        draft.timings["total"] = (time.perf_counter() - proposal.started) * 1000
        commit_step(
            self.store,
            self.device,
            self.episode_id,
            draft,
            proposal.started,
            act=act,
            package=proposal.package,
        )
        self.index += 1

    # --- pausing for a person (the inbox path) --------------------------------------------------------------
    def paused(self) -> None:
        """The episode waits for a person (needs_user): its heartbeat stops until it runs again."""
        self._heartbeat.stop()

    def running_again(self) -> None:
        claim_episode(self.store, self.episode_id)
        self._heartbeat = Heartbeat(self.store, self.episode_id).start()

    # --- the end --------------------------------------------------------------------------------------------
    def end(self, outcome: str, detail: str) -> None:
        """End the episode (unless a pause ended it already) and give the phone back."""
        if self.ended:
            return
        self.ended = True
        self._heartbeat.stop()
        try:
            info = self.store.episode(self.episode_id)
            if info.is_running:
                self.store.finish_episode(self.episode_id, Outcome(outcome), detail=detail)
            self.device.flush()
        except Exception:  # noqa: BLE001 - the phone is released whatever the store says
            log.warning("could not end episode %s cleanly", self.episode_id, exc_info=True)
        finally:
            self.hold.release()


class Drives:
    """The phones this server's clients drive, by serial."""

    def __init__(
        self,
        store: TrajectoryStore,
        *,
        adb_of: Any,
        registry: Any,
        policy: SafetyPolicy,
    ) -> None:
        self.store = store
        self.adb_of = adb_of  # serial -> the adb server it is on (None: unknown phone)
        self.registry = registry  # () -> the app registry (loaded once, when first needed)
        self.policy = policy
        self._drives: dict[str, Drive] = {}
        self._lock = threading.Lock()

    def get(self, serial: str, *, client: str, task: str | None = None) -> Drive:
        with self._lock:
            drive = self._drives.get(serial)
            if drive is not None and not drive.ended:
                return drive
            adb = self.adb_of(serial)
            if adb is None:
                raise UserError(f"no phone {serial!r} in the farm", "see the phones with list_phones")
            drive = Drive.open(
                self.store,
                serial,
                adb,
                registry=self.registry(),
                policy=self.policy,
                client=client,
                task=task,
            )
            self._drives[serial] = drive
            return drive

    def current(self, serial: str) -> Drive | None:
        with self._lock:
            drive = self._drives.get(serial)
            return drive if drive is not None and not drive.ended else None

    def by_episode(self, episode_id: str) -> Drive | None:
        with self._lock:
            return next(
                (d for d in self._drives.values() if d.episode_id == episode_id and not d.ended), None
            )

    def release(
        self, serial: str, outcome: str = "finished", detail: str = "released by the MCP client"
    ) -> str:
        with self._lock:
            drive = self._drives.pop(serial, None)
        if drive is None or drive.ended:
            raise UserError(
                f"this server does not hold phone {serial}", "hold one with hold_phone or a device call"
            )
        drive.end(outcome, detail)
        return drive.episode_id

    def close(self) -> None:
        with self._lock:
            drives, self._drives = list(self._drives.values()), {}
        for drive in drives:
            drive.end(str(Outcome.INTERRUPTED), "the MCP server stopped")


__all__ = ["SOURCE", "Drive", "Drives", "Proposal"]
