"""``research``: multi-step information retrieval over a seeded corpus with cited answers."""

from gymforge.envs.research.env import ResearchEnv

__all__ = ["ResearchEnv"]
