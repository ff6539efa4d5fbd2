"""The project templates, by package name; ``gridlib`` is held out as a whole family."""

from gymforge.envs.swe.projects import HELD_OUT_PROJECT, Project
from gymforge.envs.swe.templates.gridlib import GRIDLIB
from gymforge.envs.swe.templates.invoicing import INVOICING
from gymforge.envs.swe.templates.textkit import TEXTKIT

PROJECTS: dict[str, Project] = {p.package: p for p in (TEXTKIT, INVOICING, GRIDLIB)}
TRAIN_PROJECTS = tuple(p for p in PROJECTS if p != HELD_OUT_PROJECT)


__all__ = ["HELD_OUT_PROJECT", "PROJECTS", "TRAIN_PROJECTS"]
