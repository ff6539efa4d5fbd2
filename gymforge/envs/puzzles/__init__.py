"""Single-turn logic puzzles verified by the validity of the solution."""

from gymforge.envs.puzzles.env import FAMILIES, PuzzlesEnv

__all__ = ["FAMILIES", "PuzzlesEnv"]
