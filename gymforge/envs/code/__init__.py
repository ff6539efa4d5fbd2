"""``code``: function-writing and stdio tasks judged honestly in the sandbox."""

from gymforge.envs.code.env import CodeEnv, CodeReward, CodeRow, answer_language, row_to_task
from gymforge.envs.code.families import FAMILIES, HELDOUT

__all__ = [
    "FAMILIES",
    "HELDOUT",
    "CodeEnv",
    "CodeReward",
    "CodeRow",
    "answer_language",
    "row_to_task",
]
