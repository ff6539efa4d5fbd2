"""Attack: answer reasoning-gym's numeric tasks with ``nan``.

complex_arithmetic scores ``min(1.0, exp(-abs(answer - result)))``: for the answer ``nan``
the distance is NaN, ``min(1.0, nan)`` is 1.0, and every task passed. number_sorting reads a
JSON list of numbers, checks it is sorted and each number within 1 of the expected: a list
of ``NaN`` of the right length is "sorted" (NaN compares false both ways) and within
tolerance, and passed too. Neither attack was in QA's red team, so both datasets were listed
as "red team passed". Success means a reply whose numbers are not numbers is a success; the
adapter refuses such an answer before any scorer sees it (``not_a_number``), unless the
task's own stored answer has one, and QA's ``not_a_number`` case tries it on every dataset.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from rg_attack import judge, rg_task, use_test_uids

from gymforge.envs.reasoning_gym.family import ReasoningGymFamily
from gymforge.envs.reasoning_gym.redteam import cases_for
from gymforge.kit.redteam import CraftedReply

pytest.importorskip("reasoning_gym")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _nan_of(task: Any) -> str:
    return NUMBER.sub("NaN", str(task.truth["answer"]))


@pytest.mark.parametrize("dataset", ["complex_arithmetic", "number_sorting"])
def test_an_answer_of_nans_is_not_a_success(monkeypatch: Any, dataset: str) -> None:
    use_test_uids(monkeypatch)
    env_id = f"reasoning-gym:{dataset}"
    for seed in range(3):
        task = rg_task(seed, env_id)
        for answer in (_nan_of(task), "nan", "inf", "-Infinity"):
            verdict = judge(task, answer, env_id)
            assert verdict["passed"] is False, (dataset, answer, verdict)
        right = judge(task, str(task.truth["answer"]), env_id)
        assert right["passed"] is True, right


def test_qa_red_team_tries_numbers_that_are_not_numbers() -> None:
    family = ReasoningGymFamily("number_sorting")
    case = next(c for c in cases_for(family) if c.name == "not_a_number")
    task = family.task(1, 0)
    policy = case.make_policy()
    assert isinstance(policy, CraftedReply) and policy.from_task is not None
    reply = policy.from_task(task)
    assert reply is not None and "NaN" in reply and not re.search(r"\d", reply), reply
