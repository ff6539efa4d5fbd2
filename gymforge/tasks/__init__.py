"""Task distributions: families, parameter spaces, datasets, held-out splits, and the
training paths (sources, mixtures, curricula, hard-negative pools) that refuse held-out tasks."""

from gymforge.tasks.curriculum import Curriculum
from gymforge.tasks.dataset import Dataset, MathRow, load_jsonl
from gymforge.tasks.family import ChoiceKnob, IntKnob, ParamSpace, TaskFamily
from gymforge.tasks.hard_negatives import HardNegativePool
from gymforge.tasks.mixture import Mixture
from gymforge.tasks.source import TRAINING_PATHS, SplitName, TaskSource
from gymforge.tasks.split import HeldOutError, Split
from gymforge.tasks.task_id import TaskId, parse_task_id
from gymforge.tasks.truth import AnswerTruth, UntypedTruth
from gymforge.tasks.truth_dump import dump_truth

__all__ = [
    "TRAINING_PATHS",
    "AnswerTruth",
    "ChoiceKnob",
    "Curriculum",
    "Dataset",
    "HardNegativePool",
    "HeldOutError",
    "IntKnob",
    "MathRow",
    "Mixture",
    "ParamSpace",
    "Split",
    "SplitName",
    "TaskFamily",
    "TaskId",
    "TaskSource",
    "UntypedTruth",
    "dump_truth",
    "load_jsonl",
    "parse_task_id",
]
