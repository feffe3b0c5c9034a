"""The registry of model families: each family's name and the one instance that serves it."""

from __future__ import annotations

from mobile_agent.errors import UserError
from mobile_agent.model.autoglm import AutoGLM
from mobile_agent.model.base import ModelFamily
from mobile_agent.model.qwen import qwen3_vl, qwen25_vl
from mobile_agent.model.uitars import UITars, doubao_ui_tars, ui_tars_1_0
from mobile_agent.model.venus2 import UIVenus2
from mobile_agent.model.venus15 import UIVenus15, UIVenusNavi

DEFAULT_FAMILY = "ui-venus-2"


FAMILIES: dict[str, ModelFamily] = {
    family.name: family
    for family in (
        UIVenus2(),
        UIVenus15(),
        UIVenusNavi(),
        AutoGLM(),
        UITars(),
        ui_tars_1_0(),
        doubao_ui_tars(),
        qwen3_vl("qwen-vl"),
        qwen25_vl(),
        qwen3_vl(),
    )
}


def get_family(name: str) -> ModelFamily:
    """The family registered under ``name`` (case-insensitive); UserError listing the names otherwise."""
    family = FAMILIES.get(name.strip().lower())
    if family is None:
        raise UserError(
            f"unknown model family {name!r}",
            hint=f"use one of: {', '.join(FAMILIES)}",
        )
    return family
