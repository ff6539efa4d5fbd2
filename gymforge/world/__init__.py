"""World state for tool environments: SQLite-backed, template snapshots, fast reset,
canonical fingerprints, row diffs, idempotent writes with faults, user simulators."""

from gymforge.world.clock import IdGen, SimClock
from gymforge.world.db import Diff, TableDiff, Template, TemplateCache, WorldDB, rebuild
from gymforge.world.env import WorldToolEnv
from gymforge.world.render import RENDERER_VERSION, paginate, view
from gymforge.world.schema import Column, Schema, Table, table
from gymforge.world.sim import Persona, PolicyUser, ScriptedUser, Slot, UserSimulator, UserTurn
from gymforge.world.tasks import WorldFamily
from gymforge.world.verify import Expect, Finding, effect_findings, stray_findings, verdict_of
from gymforge.world.writes import WorldFaults, WriteGuard, world_read, world_write

__all__ = [
    "RENDERER_VERSION",
    "Column",
    "Diff",
    "Expect",
    "Finding",
    "IdGen",
    "Persona",
    "PolicyUser",
    "Schema",
    "ScriptedUser",
    "SimClock",
    "Slot",
    "Table",
    "TableDiff",
    "Template",
    "TemplateCache",
    "UserSimulator",
    "UserTurn",
    "WorldDB",
    "WorldFamily",
    "WorldFaults",
    "WorldToolEnv",
    "WriteGuard",
    "effect_findings",
    "paginate",
    "rebuild",
    "stray_findings",
    "table",
    "verdict_of",
    "view",
    "world_read",
    "world_write",
]
