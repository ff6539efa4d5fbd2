"""Reward parts: named components, composition, the answer-form component."""

from __future__ import annotations

import pytest

from gymforge.reward import ComposedReward, FormReward, StandardReward, StepCosts
from gymforge.verify import Verdict


def test_reward_parts_are_named_components() -> None:
    win, miss = Verdict(passed=True), Verdict(passed=False, reason="no_answer")
    partial = StandardReward(partial_credit=True, step_cost=0.0)
    assert partial(Verdict(passed=False, score=0.25), StepCosts()) == {"task": 0.25}
    assert partial(None, StepCosts()) == {}
    formed = Verdict(passed=False, reason="not_equal", facts={"form_ok": False})
    both = ComposedReward(StandardReward(), FormReward())
    assert both(formed, StepCosts(invalid_call=True)) == {
        "step_cost": -0.01,
        "invalid_call": -0.1,
        "task": 0.0,
        "form": -0.5,
    }
    assert both(miss, StepCosts()) == {"step_cost": -0.01, "task": 0.0}
    with pytest.raises(ValueError, match="both produce"):
        ComposedReward(StandardReward(), StandardReward(step_cost=0.0))(win, StepCosts())
    with pytest.raises(ValueError, match="at least one"):
        ComposedReward()


def test_form_reward_reads_form_ok_only_when_a_form_was_demanded() -> None:
    right = Verdict(passed=True, facts={"form": "integer", "form_ok": True})
    unreduced = Verdict(passed=True, facts={"form": "reduced_fraction", "form_ok": False})
    wrong_value = Verdict(passed=False, reason="not_equal", facts={"form_ok": True})
    assert FormReward()(right, StepCosts()) == {"form": 0.0}
    assert FormReward()(unreduced, StepCosts()) == {"form": -0.5}
    assert FormReward(penalty=-1.0)(unreduced, StepCosts()) == {"form": -1.0}
    assert FormReward()(wrong_value, StepCosts()) == {"form": 0.0}  # the value is task's job
    assert FormReward()(Verdict(passed=True), StepCosts()) == {}
    assert FormReward()(None, StepCosts()) == {}
