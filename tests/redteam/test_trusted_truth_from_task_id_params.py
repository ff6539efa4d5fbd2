"""A task id carrying explicit params hands a family values its generator never made: JSON
text from the id (``page_size=10.0``), which a ``ChoiceKnob`` accepts as ``10``. Families
that build their truth ``trusted`` (support_desk, expenses, puzzles.coloring) then kept a
float where an int is declared: the task's written truth said ``10.0`` and ``3.0`` where
validation (the defining path, and every release before the trusted build) writes ``10`` and
``3``, and the truth the live episode scored with was not the one a replay parses from the
written task (support_desk's payment pages, a ``range`` over a float, even failed live).
The attack holds when such a task is exactly the validated one."""

from __future__ import annotations

import json

import pytest

from gymforge.registry.handle import task_source
from gymforge.registry.resolve import make_env
from gymforge.tasks.truth_dump import dump_truth

_IDS = [
    ("expenses", "expenses.batch/v1/d1/s5/"
     'currency_mix="domestic",fault_rate=0.0,page_size=10.0,reports=30'),
    ("support-desk", "support.duplicate_charge/v1/d1/s5/"
     'distractors=1,fault_rate=0.0,page_size=8.0,region="na"'),
    ("support-desk", "support.refund_window/v1/d1/s5/"
     'distractors=1,fault_rate=0.0,inside=true,page_size=8,region="eu"'),
    ("puzzles", 'puzzles.coloring/v2/d1/s5/colors=3.0,density=40,naming="letters",nodes=6'),
    ("puzzles", 'puzzles.coloring/v2/d1/s5/colors=3,density=40.0,naming="letters",nodes=6'),
    ("digits", "digits.sum/v1/d1/s5/a=3,b=4"),
]  # fmt: skip


@pytest.mark.parametrize(("env_id", "task_id"), _IDS, ids=[i for _, i in _IDS])
def test_explicit_params_build_the_validated_truth(env_id: str, task_id: str) -> None:
    source = task_source(make_env(env_id))
    assert source is not None
    family = source.families[task_id.split("/")[0]]
    task = family.resolve(task_id)
    written = json.loads(task.model_dump_json())["truth"]
    parsed = family.truth_model().model_validate(written)
    assert json.dumps(task.truth) == json.dumps(dump_truth(parsed))  # written as validated
    live = family.truth_of(task)  # the truth the episode scores with
    assert live.model_dump_json() == parsed.model_dump_json()
