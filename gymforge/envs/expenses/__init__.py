"""``expenses``: a long-horizon batch of expense reports over a SQLite world."""

from gymforge.envs.expenses.env import ExpensesEnv

__all__ = ["ExpensesEnv"]
