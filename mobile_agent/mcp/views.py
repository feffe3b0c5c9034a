"""What the tools and resources hand back, as plain JSON-ready data: an episode with its steps, the recent
episodes, and a compact view tree a calling model can read."""

from __future__ import annotations

from typing import Any

from mobile_agent.screen.viewtree import ViewTree, visible
from mobile_agent.store.store import TrajectoryStore

MAX_TREE_LINES = 300


def episode_view(store: TrajectoryStore, episode_id: str, steps: bool = True) -> dict[str, Any]:
    """Status, outcome, answer, verdict and (with ``steps``) each step: who acted, what, what the guards said."""
    info = store.episode(episode_id)
    out: dict[str, Any] = {
        "episode_id": info.id,
        "task": info.task,
        "phone": info.device,
        "status": str(info.status),
        "outcome": str(info.outcome) if info.outcome else None,
        "detail": info.outcome_detail,
        "answer": info.answer,
        "steps": info.step_count,
        "started_at": info.started_at.isoformat(),
        "ended_at": info.ended_at.isoformat() if info.ended_at else None,
        "verdict": _verdict(store, info.id),
        "source": (info.meta or {}).get("source"),
    }
    if steps:
        out["trajectory"] = [
            {
                "index": s.index,
                "source": str(s.action_source),
                "action": s.action.describe() if s.action else None,
                "thought": s.thought,
                "foreground": s.foreground_app,
                "status": s.status,
                "decisions": [d for d in s.guard_decisions if d.get("verdict") != "allow" or d.get("kind")],
                "error": s.error_text,
                "screenshot": str(store.screenshot_path(s)) if store.screenshot_path(s) else None,
            }
            for s in store.steps(info.id)
        ]
    return out


def _verdict(store: TrajectoryStore, episode_id: str) -> dict[str, Any] | None:
    try:
        from mobile_agent.verify.service import episode_verdict
    except ImportError:  # pragma: no cover - verify ships with the package
        return None
    verdict = episode_verdict(store, episode_id)
    if verdict is None:
        return None
    return {"verdict": str(verdict.verdict.value), "source": verdict.source, "reasons": list(verdict.reasons)}


def recent_episodes(store: TrajectoryStore, limit: int = 20) -> list[dict[str, Any]]:
    return [
        {
            "episode_id": e.id,
            "task": e.task,
            "phone": e.device,
            "status": str(e.status),
            "outcome": str(e.outcome) if e.outcome else None,
            "steps": e.step_count,
            "started_at": e.started_at.isoformat(),
            "source": (e.meta or {}).get("source"),
        }
        for e in store.list_episodes(limit=limit)
    ]


def compact_tree(xml: str | None) -> str:
    """One line per visible element that says something or can be acted on: its label, class, id, bounds, the
    point to tap, and what it accepts (click, long-click, scroll, edit)."""
    tree = ViewTree.parse(xml) if xml else None
    if tree is None:
        return "(no view tree: the screen could not be read; use screenshot)"
    lines = []
    for element in tree.elements:
        if not visible(element) or element.bounds is None or element.bounds.empty:
            continue
        node = element.node
        flags = [
            name
            for name, attribute in (
                ("click", "clickable"),
                ("long", "long-clickable"),
                ("scroll", "scrollable"),
                ("checked", "checked"),
                ("selected", "selected"),
            )
            if node.get(attribute) == "true"
        ]
        if element.class_name.endswith("EditText"):
            flags.append("edit")
        label = element.text.strip() or element.content_desc.strip()
        if not label and not flags:
            continue
        b, c = element.bounds, element.bounds.centre
        short = element.class_name.rsplit(".", 1)[-1]
        rid = element.resource_id.rsplit("/", 1)[-1]
        lines.append(
            f"{label[:80]!r} {short}{f' #{rid}' if rid else ''} [{b.left},{b.top},{b.right},{b.bottom}] "
            f"tap=({c.x},{c.y}){' ' + ','.join(flags) if flags else ''}"
        )
        if len(lines) >= MAX_TREE_LINES:
            lines.append(f"... (more than {MAX_TREE_LINES} elements; the rest left out)")
            break
    return "\n".join(lines) or "(nothing visible to read or act on)"


__all__ = ["compact_tree", "episode_view", "recent_episodes"]
