"""Meituan's colours and how it writes money."""

from __future__ import annotations

from mobile_agent.sim.world import kit

YELLOW = kit.MEITUAN_YELLOW
ORANGE = (255, 102, 0)
DARK = (34, 34, 34)
GREY = (153, 153, 153)


def money(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))
