"""The trajectory store: runs, episodes and steps in SQL; screenshots as JPEG files next to the database.

Modules that add tables declare them on ``schema.Base`` and are imported here, so ``TrajectoryStore.open``
creates them.
"""

import mobile_agent.store.pauses  # noqa: F401 - registers the pauses table on Base
import mobile_agent.store.queue  # noqa: F401 - registers the task-queue tables on Base
from mobile_agent.store import judgments  # noqa: F401 - registers the judgments table on Base
from mobile_agent.store.records import (
    ActionSource,
    DeviceInfo,
    EpisodeInfo,
    EpisodeStatus,
    RunInfo,
    RunStatus,
    StepInfo,
    StepRecord,
    StepTimings,
)
from mobile_agent.store.store import TrajectoryStore

__all__ = [
    "ActionSource",
    "DeviceInfo",
    "EpisodeInfo",
    "EpisodeStatus",
    "RunInfo",
    "RunStatus",
    "StepInfo",
    "StepRecord",
    "StepTimings",
    "TrajectoryStore",
]
