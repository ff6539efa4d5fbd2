"""Attack: write ``nan`` so the adapter's ``not_a_number`` rule does not read it, but the
scorer does.

The rule searches the answer's text for ``nan``/``inf`` before any scorer. complex_arithmetic
removes spaces before ``float``, so ``n a n`` is NaN to it and ``min(1.0, exp(-nan))`` paid
1.0 on every task; number_sorting reads the answer with ``json.loads``, which decodes
``"\\u006eaN"`` to ``naN`` before ``float``, and a list of them passed as "sorted and within
1". Success means a reply whose numbers are not numbers is a success again; the rule reads
the answer as scorers may: as written, without whitespace, and with backslash escapes
decoded.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from rg_attack import judge, rg_task, use_test_uids
from test_rg_scorer_not_a_number import NUMBER

pytest.importorskip("reasoning_gym")


def _escaped_nans(task: Any) -> str:
    return NUMBER.sub(r"\\u006eaN", str(task.truth["answer"])).replace("'", '"')


@pytest.mark.parametrize(
    ("dataset", "answers"),
    [
        ("complex_arithmetic", lambda task: ["n a n", "N a N", "n an+n anj", "(n a n)"]),
        ("number_sorting", lambda task: [_escaped_nans(task)]),
    ],
)
def test_a_nan_the_scorer_reads_is_not_a_success(
    monkeypatch: Any, dataset: str, answers: Any
) -> None:
    use_test_uids(monkeypatch)
    env_id = f"reasoning-gym:{dataset}"
    for seed in range(2):
        task = rg_task(seed, env_id)
        for answer in answers(task):
            verdict = judge(task, answer, env_id)
            assert verdict["passed"] is False, (dataset, answer, verdict)
        right = judge(task, str(task.truth["answer"]), env_id)
        assert right["passed"] is True, right
        spaced = re.sub(r"\s+", "  ", str(task.truth["answer"]))
        assert judge(task, spaced, env_id)["passed"] is True
