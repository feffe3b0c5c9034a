"""Which safety policy an episode of a batch runs under.

The base is the policy the command was given (``batch`` / ``worker`` ``--policy/--allow/--deny``), else the words
stored with the episode's run (``submit`` / ``batch`` keep them in the run's configuration), else the library default
(ask: in a batch, nobody answers, so the episode pauses as needs_user). A task's own ``safety:`` words are layered on
top: at equal specificity the task's rule wins.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from mobile_agent.gate.policy import SafetyPolicy, parse_policy
from mobile_agent.store.store import TrajectoryStore

SAFETY_KEYS = ("policy", "allow", "deny")


def policy_words(settings: Mapping[str, Any]) -> dict[str, list[str]]:
    """The safety words among a command's settings or a run's stored configuration (empty lists dropped)."""
    return {key: list(settings[key]) for key in SAFETY_KEYS if settings.get(key)}


def policy_from_words(
    words: Mapping[str, Any] | None, base: SafetyPolicy | None = None
) -> SafetyPolicy | None:
    """``{policy: [...], allow: [...], deny: [...]}`` as a policy on top of ``base``; None when there are no words."""
    found = policy_words(words or {})
    if not found:
        return base
    return parse_policy(
        found.get("policy", []), allow=found.get("allow", []), deny=found.get("deny", []), base=base
    )


class EpisodePolicies:
    """The policy of each claimed task. Thread-safe; a run's stored words are read once."""

    def __init__(self, store: TrajectoryStore, override: SafetyPolicy | None = None) -> None:
        self.store = store
        self.override = override
        self._by_run: dict[str, SafetyPolicy | None] = {}
        self._lock = threading.Lock()

    def run_policy(self, run_id: str) -> SafetyPolicy | None:
        with self._lock:
            if run_id not in self._by_run:
                self._by_run[run_id] = policy_from_words(self.store.run(run_id).config)
            return self._by_run[run_id]

    def for_task(self, run_id: str, spec: Mapping[str, Any]) -> SafetyPolicy:
        base = self.override if self.override is not None else self.run_policy(run_id)
        return policy_from_words(spec.get("safety"), base) or base or SafetyPolicy()


__all__ = ["SAFETY_KEYS", "EpisodePolicies", "policy_from_words", "policy_words"]
