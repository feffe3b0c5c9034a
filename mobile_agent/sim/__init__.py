"""The simulated phone: a world (phone.py), the adbd wire side (adbd.py, shell.py, sync.py) and farms of them.

`SimFarm` and `SimPhone` are imported lazily so that importing one sim module stays cheap and cycle-free.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mobile_agent.sim.farm import SimFarm, SimPhone

__all__ = ["SimFarm", "SimPhone"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from mobile_agent.sim import farm

        return getattr(farm, name)
    raise AttributeError(f"module 'mobile_agent.sim' has no attribute {name!r}")
