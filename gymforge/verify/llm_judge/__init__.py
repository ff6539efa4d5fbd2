"""Rubric LLM judges: grading through any ``Policy``, exploit screens, and calibration.

- ``Rubric``/``Criterion``/``DEFAULT_RUBRIC``: what the judge scores (``rubric.py``);
- ``RubricJudge``: the model call, parsing and the decision (``rubric_judge.py``), after
  the exploit screens (``screen_answer``, ``screens.py``);
- ``Calibration``, ``calibrate``, ``agreement``, ``load_labels``: agreement with human
  labels and the threshold (``calibrate.py``; CLI ``gymforge judge calibrate``);
- ``JUDGE_REDTEAM``: reusable red-team cases for judge-graded environments.
"""

from gymforge.verify.llm_judge.calibrate import (
    Agreement,
    Calibration,
    JudgeRecord,
    LabeledItem,
    agreement,
    calibrate,
    choose_threshold,
    load_labels,
    recorded,
)
from gymforge.verify.llm_judge.redteam import ATTACKS, JUDGE_REDTEAM
from gymforge.verify.llm_judge.rubric import (
    DEFAULT_RUBRIC,
    Criterion,
    Rubric,
    Scores,
    parse_scores,
    render_prompt,
)
from gymforge.verify.llm_judge.rubric_judge import (
    VERSION,
    RubricJudge,
    ScriptedJudge,
    gullible,
    score_items,
)
from gymforge.verify.llm_judge.screens import MASTER_KEYS, screen_answer

__all__ = [
    "ATTACKS",
    "DEFAULT_RUBRIC",
    "JUDGE_REDTEAM",
    "MASTER_KEYS",
    "VERSION",
    "Agreement",
    "Calibration",
    "Criterion",
    "JudgeRecord",
    "LabeledItem",
    "Rubric",
    "RubricJudge",
    "Scores",
    "ScriptedJudge",
    "agreement",
    "calibrate",
    "choose_threshold",
    "gullible",
    "load_labels",
    "parse_scores",
    "recorded",
    "render_prompt",
    "score_items",
    "screen_answer",
]
