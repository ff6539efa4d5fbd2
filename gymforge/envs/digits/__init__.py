"""Single-digit sums: a family small enough for a tiny random-init model to learn."""

from gymforge.envs.digits.env import FAMILY, DigitsEnv, problem_ids

__all__ = ["FAMILY", "DigitsEnv", "problem_ids"]
