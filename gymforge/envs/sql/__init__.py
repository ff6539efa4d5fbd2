"""Text-to-SQL over generated SQLite databases, verified by read-only execution."""

from gymforge.envs.sql.env import SqlEnv
from gymforge.envs.sql.family import FAMILIES, HELD_OUT_FAMILY, SqlFamily

__all__ = ["FAMILIES", "HELD_OUT_FAMILY", "SqlEnv", "SqlFamily"]
