"""A replay suite: recorded episodes replayed as a regression test, one task of the farm's queue each.

``mobile-agent replay --run RUN`` (or ``--episodes FILE``, or several episode ids) makes a new run whose tasks are
replays; the farm's workers serve them on its phones like any batch (leases, retries on another phone when a phone
fails, quarantine, ``runs show``), under the run's safety policy with each source task's own ``safety:`` words on
top, after the source task's reset. What came of each is read back from the store:

- ``replayed``: every recorded step was performed and the replay ended as its source did;
- ``stopped``: it stopped before a step (which one, and why: a divergence, a refusal, a missing app);
- ``needs_person``: a consequential step waits for a person's yes (``--allow`` it, or replay at a terminal);
- ``failed``: the phones could not run it (the queue gave up after its retries); ``pending``: not run yet.

The suite passes when every episode replayed. When the source task had a check, the replay is checked the same way
and both verdicts are reported side by side.

    run = submit_suite(store, suite_sources(store, run="7c1e"), options=ReplayOptions(reset=ResetMode.FORCE_STOP))
    ... the farm's workers serve run.id ...
    summary = suite_summary(store, run.id); summary.passed, summary.to_dict()
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mobile_agent.actions import Outcome
from mobile_agent.errors import UserError
from mobile_agent.replay.replayer import replayable_steps
from mobile_agent.replay.results import ReplayOptions, ResetMode
from mobile_agent.store import queue as q
from mobile_agent.store import queue_status as qs
from mobile_agent.store.answers import task_spec
from mobile_agent.store.records import EpisodeInfo, RunInfo, StepInfo
from mobile_agent.store.store import TrajectoryStore
from mobile_agent.verify.service import episode_verdict

SUITE_KEY = "replay_suite"  # the run configuration's key that makes a run a replay suite
# The reset a source task asked for (farm/tasks.py ResetMode values) as the replay's.
_RESETS = {
    "none": ResetMode.NONE,
    "home": ResetMode.HOME,
    "force-stop": ResetMode.FORCE_STOP,
    "clear": ResetMode.CLEAR_DATA,
}
# Queue states of a task that ended with a result ("waiting" / "expired": where the store keeps a paused episode's
# task apart; a replay leaves no pause, so its needs_user is a result like any other).
_ENDED = frozenset({"done", "waiting", "expired"})
_STEP = re.compile(r"^step (\d+):")
_EPISODE_ID = re.compile(r"^[0-9A-Za-z_-]{1,64}$")
MAX_EPISODE_FILE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class SuiteEntry:
    """What came of one source episode in the suite."""

    source_id: str
    task: str
    status: str  # replayed | stopped | needs_person | failed | pending
    replay_id: str | None = None
    outcome: str | None = None
    source_outcome: str | None = None
    device: str | None = None
    step: int | None = None  # the recorded step the replay stopped before
    replay_step: int | None = None  # that step's index in the replay episode
    why: str | None = None
    popups: int = 0  # popups the recording did not have, dismissed
    noted: int = 0  # steps with differences elsewhere on the screen, noted
    verdict: str | None = None  # the replay's verified verdict, when its task has a check
    source_verdict: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class SuiteSummary:
    run_id: str
    name: str
    entries: list[SuiteEntry] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        counted = Counter(e.status for e in self.entries)
        return {s: counted.get(s, 0) for s in ("replayed", "stopped", "needs_person", "failed", "pending")}

    @property
    def passed(self) -> bool:
        return bool(self.entries) and all(e.status == "replayed" for e in self.entries)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "name": self.name,
            "passed": self.passed,
            "counts": self.counts,
            "episodes": [e.to_dict() for e in self.entries],
        }


# ----- choosing and enqueueing ----------------------------------------------------------------------------------
def read_episode_file(path: str | Path) -> list[str]:
    """Episode ids from a file: one a line (``#`` starts a comment); a bad line is a UserError naming it."""
    file = Path(path)
    hint = "one episode id (or unique prefix) a line, as `mobile-agent episodes` shows them; # for comments"
    try:
        data = file.read_bytes()[: MAX_EPISODE_FILE_BYTES + 1]
    except OSError as exc:
        raise UserError(f"cannot read {file}: {exc.strerror or exc}", hint=hint) from None
    if len(data) > MAX_EPISODE_FILE_BYTES:
        raise UserError(f"{file} is larger than {MAX_EPISODE_FILE_BYTES} bytes", hint=hint)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{file} is not UTF-8 text (byte {exc.start})", hint=hint) from None
    ids = []
    for number, line in enumerate(text.splitlines(), 1):
        word = line.split("#", 1)[0].strip()
        if not word:
            continue
        if not _EPISODE_ID.fullmatch(word):
            raise UserError(f"{file}:{number}: {word[:40]!r} is not an episode id", hint=hint)
        ids.append(word)
    if not ids:
        raise UserError(f"{file} names no episode", hint=hint)
    return ids


def suite_sources(
    store: TrajectoryStore, *, run: str | None = None, episodes: Sequence[str] = ()
) -> list[EpisodeInfo]:
    """The episodes to replay: those of ``run`` that ended and have something to replay (not replays themselves,
    not attempts the farm gave up on as an infrastructure failure), then ``episodes`` by id or prefix."""
    chosen: dict[str, EpisodeInfo] = {}
    if run is not None:
        info = store.run(run)
        for episode in reversed(store.list_episodes(run_id=info.id, limit=None)):
            if _worth_replaying(store, episode):
                chosen[episode.id] = episode
    for wanted in episodes:
        episode = store.episode(wanted)
        if not replayable_steps(store.steps(episode.id)):
            raise UserError(
                f"episode {episode.id} has no performed actions to replay",
                hint=f"look at its steps with `mobile-agent show {episode.id}`",
            )
        chosen[episode.id] = episode
    if not chosen:
        raise UserError(
            f"run {run} has no ended episode with actions to replay" if run else "no episode to replay",
            hint="list them with `mobile-agent episodes`",
        )
    return list(chosen.values())


def _worth_replaying(store: TrajectoryStore, episode: EpisodeInfo) -> bool:
    if episode.is_running or episode.source_episode_id is not None or episode.outcome is None:
        return False
    if episode.outcome == Outcome.INTERRUPTED or str(episode.outcome) in ("error:device_lost", "error:adb"):
        return False
    return bool(replayable_steps(store.steps(episode.id)))


def submit_suite(
    store: TrajectoryStore,
    sources: Sequence[EpisodeInfo],
    *,
    options: ReplayOptions,
    reset_given: bool = False,
    name: str | None = None,
    safety_words: Mapping[str, list[str]] | None = None,
) -> RunInfo:
    """A new run with one queue task per source episode. Each task keeps its source task's ``safety:`` words,
    check and (unless ``reset_given``) reset; the run keeps the replay options and the suite's safety words."""
    config = {
        SUITE_KEY: {
            "sources": [s.id for s in sources],
            "on_divergence": options.on_divergence.value,
            "reset": options.reset.value,
            "wait_s": options.wait_s,
            "hash_threshold": options.hash_threshold,
        },
        **{k: list(v) for k, v in (safety_words or {}).items() if v},
    }
    run = store.create_run(name or f"replay of {len(sources)} episode(s)", config)
    rows = []
    for seq, source in enumerate(sources):
        spec = task_spec(store, source.id)
        replay: dict[str, Any] = {"episode": source.id}
        if not reset_given and spec.get("reset") in _RESETS:
            replay["reset"] = _RESETS[spec["reset"]].value
        task_spec_out: dict[str, Any] = {"replay": replay}
        for key in ("safety", "check"):
            if spec.get(key):
                task_spec_out[key] = spec[key]
        if "check" not in task_spec_out and source.meta.get("check"):
            task_spec_out["check"] = source.meta["check"]
        rows.append(q.NewTask(seq, f"replay {source.id}", source.task, app=source.app, spec=task_spec_out))
    q.enqueue_tasks(store, run.id, rows)
    return run


def suite_options(run: RunInfo, spec: Mapping[str, Any]) -> ReplayOptions:
    """The replay options of one task of suite ``run``: the run's, with the task's own reset."""
    stored = dict(run.config.get(SUITE_KEY) or {})
    reset = (spec.get("replay") or {}).get("reset") or stored.get("reset", ResetMode.NONE.value)
    return ReplayOptions(
        on_divergence=stored.get("on_divergence", "stop"),
        reset=reset,
        wait_s=float(stored.get("wait_s", ReplayOptions().wait_s)),
        hash_threshold=int(stored.get("hash_threshold", ReplayOptions().hash_threshold)),
    )


def is_suite(run: RunInfo) -> bool:
    return SUITE_KEY in run.config


# ----- reading what came of it ----------------------------------------------------------------------------------
def suite_summary(store: TrajectoryStore, run_id: str) -> SuiteSummary:
    run = store.run(run_id)
    if not is_suite(run):
        raise UserError(
            f"run {run.id} is not a replay suite", hint="make one with `mobile-agent replay --run RUN`"
        )
    entries = [_entry(store, task) for task in qs.list_tasks(store, run.id)]
    return SuiteSummary(run.id, run.name, entries)


def _entry(store: TrajectoryStore, task: qs.QueuedTask) -> SuiteEntry:
    source = store.episode(task.spec["replay"]["episode"])
    common = {
        "source_id": source.id,
        "task": source.task,
        "source_outcome": str(source.outcome) if source.outcome else None,
        "source_verdict": _verdict(store, source.id),
    }
    state = str(getattr(task.state, "value", task.state))
    if state == "failed":
        return SuiteEntry(
            status="failed", why=task.detail or task.outcome, replay_id=task.episode_id, **common
        )
    if state not in _ENDED or task.episode_id is None:
        return SuiteEntry(status="pending", **common)
    replay = store.episode(task.episode_id)
    steps = store.steps(replay.id)
    stopped = _stopped_step(steps)
    status = "replayed"
    if stopped is not None:
        status = "needs_person" if replay.outcome == Outcome.NEEDS_USER else "stopped"
    elif _end(replay.outcome) != _end(source.outcome):
        status = "stopped"
    decisions = [d for s in steps for d in s.guard_decisions if d.get("guard") == "replay"]
    return SuiteEntry(
        status=status,
        replay_id=replay.id,
        outcome=str(replay.outcome) if replay.outcome else None,
        device=replay.device,
        step=_recorded_index(stopped) if stopped is not None else None,
        replay_step=stopped.index if stopped is not None else None,
        why=replay.outcome_detail if status != "replayed" else None,
        popups=sum(1 for d in decisions if d.get("source") == "rule"),
        noted=sum(1 for d in decisions if any(str(s).startswith("noted: ") for s in d.get("signals", []))),
        verdict=_verdict(store, replay.id),
        **common,
    )


def _end(outcome: object) -> str:
    """An outcome as a replay can reproduce it: needs_user:expired (nobody answered the recording in time) is the
    replay's needs_user."""
    text = str(outcome)
    return "needs_user" if text.startswith("needs_user") else text


def _stopped_step(steps: list[StepInfo]) -> StepInfo | None:
    """The replay's step that was not performed (the last one, when it stopped), or None."""
    last = steps[-1] if steps else None
    if last is None:
        return None
    if last.action is None or last.error_kind or last.error_text:
        return last
    return None


def _recorded_index(step: StepInfo) -> int | None:
    for d in step.guard_decisions:
        if d.get("guard") == "replay" and (m := _STEP.match(str(d.get("reason", "")))):
            return int(m.group(1))
    return None


def recorded_step(store: TrajectoryStore, entry: SuiteEntry) -> StepInfo | None:
    """The source's step that ``entry`` stopped before, for showing beside the live one."""
    if entry.step is None:
        return None
    return next((s for s in store.steps(entry.source_id) if s.index == entry.step), None)


def live_step(store: TrajectoryStore, entry: SuiteEntry) -> StepInfo | None:
    if entry.replay_id is None or entry.replay_step is None:
        return None
    return next((s for s in store.steps(entry.replay_id) if s.index == entry.replay_step), None)


def check_replay(
    store: TrajectoryStore,
    serial: str,
    adb: str | None,
    episode_id: str,
    check: Mapping[str, Any],
    phone_state: Mapping[str, Any] | None = None,
) -> None:
    """The source task's check, run on the phone as the replay left it, stored with the replay (as a batch checks
    its episodes): the suite then shows both verdicts."""
    from mobile_agent.device.android import AndroidDevice
    from mobile_agent.verify.checks import TaskCheck
    from mobile_agent.verify.service import run_and_record_checks

    device = AndroidDevice(serial, adb=adb)
    package, activity = device.foreground()
    run_and_record_checks(
        store,
        episode_id,
        TaskCheck.parse(dict(check)),
        final_hierarchy=device.hierarchy(),
        final_package=package,
        final_activity=activity,
        phone_state=phone_state,
    )


def _verdict(store: TrajectoryStore, episode_id: str) -> str | None:
    found = episode_verdict(store, episode_id)
    return str(found.verdict.value) if found is not None else None


__all__ = [
    "SUITE_KEY",
    "check_replay",
    "SuiteEntry",
    "SuiteSummary",
    "is_suite",
    "live_step",
    "read_episode_file",
    "recorded_step",
    "submit_suite",
    "suite_options",
    "suite_sources",
    "suite_summary",
]
