"""Consistency check of a store: rows against rows, and rows against the files on disk; and the clean-up of the
files a crash left behind that no row refers to."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from mobile_agent.actions import Action, Outcome
from mobile_agent.store.files import TEMP_PREFIX, sha256_file
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.schema import ID_LENGTH, EpisodeRow, RunRow, StepRow

if TYPE_CHECKING:  # the store runs the checker: a runtime import would be a cycle
    from mobile_agent.store.store import TrajectoryStore

_EPISODE_DIR = re.compile(rf"[0-9a-f]{{{ID_LENGTH}}}")
_LISTED = 10  # at most this many missing indices are spelled out


class IntegrityChecker:
    """Collects problems as sentences. Streams steps in episode order so a large store is not held in memory."""

    def __init__(self, session: Session, root: Path, *, verify_hashes: bool = True) -> None:
        self._session = session
        self._root = root
        self._verify_hashes = verify_hashes
        self._problems: list[str] = []

    def run(self) -> list[str]:
        run_ids = set(self._session.scalars(select(RunRow.id)))
        episodes = {row.id: row for row in self._session.scalars(select(EpisodeRow))}
        for row in episodes.values():
            self._check_episode(row, run_ids, episodes)

        with_steps: set[str] = set()
        step_rows = self._session.scalars(
            select(StepRow).order_by(StepRow.episode_id, StepRow.index).execution_options(yield_per=1000)
        )
        for episode_id, group in itertools.groupby(step_rows, key=lambda r: r.episode_id):
            steps = list(group)
            with_steps.add(episode_id)
            if episode_id not in episodes:
                self._problems.append(f"{len(steps)} orphan step(s) of unknown episode {episode_id}")
                continue
            self._check_steps(episodes[episode_id], steps)

        for episode_id in sorted(episodes.keys() - with_steps):
            if episodes[episode_id].step_count:
                self._problems.append(
                    f"episode {episode_id}: step count says {episodes[episode_id].step_count} but no steps are stored"
                )
            self._check_unreferenced_files(episode_id, referenced=set())
        self._check_unknown_directories(episodes.keys())
        return self._problems

    def _check_episode(self, row: EpisodeRow, run_ids: set[str], episodes: dict[str, EpisodeRow]) -> None:
        where = f"episode {row.id}"
        if row.status == EpisodeStatus.ENDED.value:
            if row.outcome is None:
                self._problems.append(f"{where}: ended without an outcome")
            if row.ended_at is None:
                self._problems.append(f"{where}: ended without an end time")
        elif row.status == EpisodeStatus.RUNNING.value:
            if row.outcome is not None:
                self._problems.append(f"{where}: still running but has outcome {row.outcome!r}")
        else:
            self._problems.append(f"{where}: unknown status {row.status!r}")
        if row.outcome is not None:
            try:
                Outcome(row.outcome)
            except ValueError:
                self._problems.append(f"{where}: unknown outcome {row.outcome!r}")
        if row.run_id is not None and row.run_id not in run_ids:
            self._problems.append(f"{where}: orphan, its run {row.run_id} does not exist")
        if row.source_episode_id is not None and row.source_episode_id not in episodes:
            self._problems.append(f"{where}: replays episode {row.source_episode_id}, which does not exist")

    def _check_steps(self, episode: EpisodeRow, steps: list[StepRow]) -> None:
        where = f"episode {episode.id}"
        indices = [s.index for s in steps]
        missing = sorted(set(range(max(indices) + 1)) - set(indices))
        if missing:
            listed = ", ".join(str(i) for i in missing[:_LISTED]) + (
                ", ..." if len(missing) > _LISTED else ""
            )
            self._problems.append(f"{where}: gap in step indices, missing {listed}")
        if episode.step_count != len(steps):
            self._problems.append(
                f"{where}: step count says {episode.step_count} but {len(steps)} steps are stored"
            )

        referenced: set[str] = set()
        for step in steps:
            step_where = f"{where} step {step.index}"
            if step.action is not None:
                try:
                    Action.from_dict(step.action)
                except ValueError:
                    self._problems.append(f"{step_where}: unreadable action {step.action!r}")
            if step.screenshot_path is not None:
                referenced.add(step.screenshot_path)
                self._check_screenshot(step_where, step)
            if step.hierarchy_path is not None:
                referenced.add(step.hierarchy_path)
                if not (self._root / step.hierarchy_path).is_file():
                    self._problems.append(f"{step_where}: hierarchy file {step.hierarchy_path} is missing")
        self._check_unreferenced_files(episode.id, referenced)

    def _check_screenshot(self, where: str, step: StepRow) -> None:
        path = self._root / step.screenshot_path
        if not path.is_file():
            self._problems.append(f"{where}: screenshot {step.screenshot_path} is missing")
            return
        size = path.stat().st_size
        if step.screenshot_bytes is not None and size != step.screenshot_bytes:
            self._problems.append(
                f"{where}: screenshot {step.screenshot_path} has {size} bytes, {step.screenshot_bytes} recorded"
            )
            return
        if step.screenshot_sha256 is None:
            self._problems.append(f"{where}: screenshot {step.screenshot_path} has no recorded sha256")
        elif self._verify_hashes and sha256_file(path) != step.screenshot_sha256:
            self._problems.append(f"{where}: screenshot {step.screenshot_path} does not match its sha256")

    def _check_unreferenced_files(self, episode_id: str, referenced: set[str]) -> None:
        directory = self._root / episode_id
        if not directory.is_dir():
            return
        for path in sorted(directory.iterdir()):
            relative = f"{episode_id}/{path.name}"
            if relative in referenced:
                continue
            if path.name.startswith(TEMP_PREFIX):
                self._problems.append(f"leftover temporary file {relative} (a write was interrupted)")
            else:
                self._problems.append(f"orphan file {relative}: no step refers to it")

    def _check_unknown_directories(self, episode_ids: Any) -> None:
        if not self._root.is_dir():
            return
        for path in sorted(self._root.iterdir()):
            if path.is_dir() and _EPISODE_DIR.fullmatch(path.name) and path.name not in episode_ids:
                self._problems.append(f"orphan directory {path.name}/: no episode with that id")


# ------------------------------------------------------------------------------------------- crash clean-up
def discard_unrecorded_files(store: TrajectoryStore, episode_id: str) -> list[str]:
    """Delete the files of an episode that no step row refers to (a process killed between writing a step's
    screenshot and committing its row leaves one). Only for episodes that are no longer running.
    """
    directory: Path = store.root / episode_id
    if not directory.is_dir():
        return []
    with store.read_session() as session:
        referenced: set[str] = set()
        for shot, hierarchy in session.execute(
            select(StepRow.screenshot_path, StepRow.hierarchy_path).where(StepRow.episode_id == episode_id)
        ):
            referenced.update(p for p in (shot, hierarchy) if p)
    removed = []
    for path in sorted(directory.iterdir()):
        relative = f"{episode_id}/{path.name}"
        if path.is_file() and (relative not in referenced or path.name.startswith(TEMP_PREFIX)):
            path.unlink(missing_ok=True)
            removed.append(relative)
    return removed


__all__ = ["IntegrityChecker", "discard_unrecorded_files"]
