"""The trajectory store: runs, episodes and steps in SQL; screenshots as JPEG files next to the database.

Modules that add tables declare them on ``schema.Base`` and are imported here (for that side effect only), so
``TrajectoryStore.open`` creates them whichever store module a caller imports first. Names are imported from the
module that defines them: ``mobile_agent.store.store.TrajectoryStore``, ``mobile_agent.store.records.StepRecord``.
"""

import mobile_agent.store.answers  # noqa: F401 - registers the pause-answers table on Base
import mobile_agent.store.judgments  # noqa: F401 - registers the judgments table on Base
import mobile_agent.store.pauses  # noqa: F401 - registers the pauses table on Base
import mobile_agent.store.phones  # noqa: F401 - registers the farm-devices table on Base
import mobile_agent.store.queue  # noqa: F401 - registers the task-queue tables on Base
