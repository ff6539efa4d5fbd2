"""``swe``: repository-level software engineering: an issue tracker, editor tools, the visible
tests, and hidden tests that judge the final repository (see ``env``)."""

from gymforge.envs.swe.env import SweEnv
from gymforge.envs.swe.families import FAMILIES, HELD_OUT, SPLIT, TRAIN_FAMILIES
from gymforge.envs.swe.reward import SweReward
from gymforge.envs.swe.taskfile import load_task_file

__all__ = [
    "FAMILIES",
    "HELD_OUT",
    "SPLIT",
    "TRAIN_FAMILIES",
    "SweEnv",
    "SweReward",
    "load_task_file",
]
