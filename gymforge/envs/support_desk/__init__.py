"""``support-desk``: billing disputes over a SQLite world with a simulated customer."""

from gymforge.envs.support_desk.env import SupportDeskEnv

__all__ = ["SupportDeskEnv"]
