"""Task distributions: families, parameter spaces, held-out splits and sources."""

from gymforge.tasks.family import ChoiceKnob, IntKnob, ParamSpace, TaskFamily, parse_task_id
from gymforge.tasks.source import SplitName, TaskSource
from gymforge.tasks.split import HeldOutError, Split

__all__ = [
    "ChoiceKnob",
    "HeldOutError",
    "IntKnob",
    "ParamSpace",
    "Split",
    "SplitName",
    "TaskFamily",
    "TaskSource",
    "parse_task_id",
]
