"""Attack: get paid for doing nothing in ``swe``.

An unchanged repository passes the hidden regression checks that the bug does not touch, and
``hidden_tests`` paid that fraction (+0.08 to +0.12 per episode): more than an honest
attempt with one invalid call. Changes the judge leaves out of the hidden run (a file in the
hidden tests' directory, a start-up hook) are no change either. Success of the attack would
be any reward component other than the costs (``step_cost``, ``invalid_call``) above zero.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from swe_attack import calc_task_file, call, oracle, play, swe_env, verdict

from gymforge.core.types import Action, Reply, ToolCall
from gymforge.envs.swe import FAMILIES
from gymforge.verify.code import CodeJudge

COSTS = {"step_cost", "invalid_call"}


def _paid(components: dict[str, float]) -> dict[str, float]:
    return {k: v for k, v in components.items() if k not in COSTS and v != 0.0}


@pytest.mark.parametrize("family", [f.name for f in FAMILIES])
def test_an_unchanged_repository_earns_nothing(code_judge: CodeJudge, family: str) -> None:
    env = swe_env(code_judge)
    tid = next(f for f in FAMILIES if f.name == family).task_id(2, 5)
    steps = play(env, tid, [Reply(text="Fixed it; all tests pass.")])
    v = verdict(steps)
    assert v["reason"] == "no_change" and v["score"] == 0.0
    assert _paid(steps[-1].reward_components) == {}


def test_changes_the_judge_drops_are_no_change(code_judge: CodeJudge, tmp_path: Path) -> None:
    env = swe_env(code_judge, calc_task_file(tmp_path))
    dropped: list[Action] = [
        call("create_file", path="hidden/test_more.py", content="x = 1\n"),
        call("create_file", path="sitecustomize.py", content="x = 1\n"),
    ]
    steps = play(env, "calc-0", dropped)
    v = verdict(steps)
    assert v["reason"] == "no_change" and v["score"] == 0.0
    assert sorted(v["facts"]["dropped_changes"]) == ["hidden/test_more.py", "sitecustomize.py"]
    assert _paid({**steps[-1].reward_components, "diff_cost": 0.0}) == {}


@pytest.mark.parametrize("family", ["swe.bugfix", "swe.cross_module"])
def test_a_cosmetic_change_earns_no_partial_credit(code_judge: CodeJudge, family: str) -> None:
    """A comment appended to a source file is a change, but it earns none of the checks the
    untouched repository already passes."""
    env = swe_env(code_judge)
    tid = next(f for f in FAMILIES if f.name == family).task_id(2, 5)
    target = next(
        a.arguments["path"]
        for a in oracle(env, tid)
        if isinstance(a, ToolCall) and a.name == "edit_file"
    )
    touch = call("run_command", command=f"sh -c 'echo \"# looked at it\" >> {target}'")
    steps = play(env, tid, [touch])
    v = verdict(steps)
    assert v["reason"] == "hidden_tests_failed" and v["score"] == 0.0, v
    assert v["facts"]["hidden_failing_before"] > 0
    assert steps[-1].reward_components["hidden_tests"] == 0.0
