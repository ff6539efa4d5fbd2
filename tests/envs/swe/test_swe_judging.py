"""swe judging: the oracle's fix passes every family, doing nothing fails, a protected-file
change fails whatever the tests say, the verdict records its facts, and the reward has its
named components."""

from __future__ import annotations

import pytest
from swe_helpers import call, oracle, play, result, verdict

from gymforge.core.types import Reply, ToolCall
from gymforge.envs.swe import FAMILIES, SweEnv
from gymforge.sandbox.doctor import bwrap_works

pytestmark = pytest.mark.skipif(not bwrap_works()[0], reason="bubblewrap unavailable")


@pytest.mark.parametrize("family", [f.name for f in FAMILIES])
def test_the_reference_fix_passes_and_doing_nothing_fails(family: str) -> None:
    tid = next(f for f in FAMILIES if f.name == family).task_id(2, 9)
    _, steps = play(tid, oracle(tid))
    v = verdict(steps)
    assert steps[-1].info["success"], v
    f = v["facts"]
    assert f["mode"] == "plain_value_calls" and f["weaker_mode"] is False
    assert f["hidden_passed"] == f["hidden_total"] == len(f["hidden_tests"]) > 0
    assert f["protected_changed"] == [] and f["visible_tests_run"] is True
    assert f["diff_lines"] > 0 and f["files_changed"] >= 1
    _, noop = play(tid, [Reply(text="Fixed it, all tests pass.")])
    nv = verdict(noop)
    assert not noop[-1].info["success"] and nv["reason"] == "no_change"
    assert nv["facts"]["visible_tests_run"] is False
    assert nv["facts"]["hidden_passed"] < nv["facts"]["hidden_total"]


def test_submit_ends_the_episode_and_is_judged() -> None:
    tid = FAMILIES[0].task_id(1, 2)
    plan = oracle(tid)
    env, steps = play(tid, [*plan[:-1], call("submit", summary="Fixes it.")])
    assert steps[-1].terminated and steps[-1].info["success"]
    assert steps[-1].info["end_reason"] == "verdict" and env.world.submitted
    assert verdict(steps)["facts"]["submitted"] is True
    assert result(steps[-1]) == {"ok": True, "result": "Fixes it."}
    assert steps[-1].observation.data["final"] is True


def test_submit_is_an_ending_tool_not_an_override() -> None:
    assert SweEnv().toolset.tools["submit"].ends_episode
    assert "_on_tool_call" not in vars(SweEnv)


def test_a_submit_with_bad_arguments_ends_nothing_and_may_be_retried() -> None:
    tid = FAMILIES[0].task_id(1, 2)
    env, steps = play(tid, [call("submit", summary="done", zzz=1), call("submit", summary=3)])
    assert [s.done for s in steps] == [False, False, True]  # the helper's reply ends it
    assert [result(s)["error"]["kind"] for s in steps[:2]] == ["invalid_arguments"] * 2
    assert all("verdict" not in s.info for s in steps[:2])
    assert not env.world.submitted and verdict(steps)["facts"]["submitted"] is False


def test_a_protected_change_fails_even_when_every_hidden_test_passes() -> None:
    tid = FAMILIES[0].task_id(2, 3)
    plan = oracle(tid)
    conf = SweEnv.tasks.resolve(tid).truth["files"]["tests/conftest.py"]
    tamper = call("edit_file", path="tests/conftest.py", old=conf, new=conf + "# harmless\n")
    _, steps = play(tid, [*plan[:-1], tamper, plan[-1]])
    v = verdict(steps)
    assert v["facts"]["hidden_passed"] == v["facts"]["hidden_total"]
    assert not v["passed"] and v["reason"] == "protected_files_changed"
    assert v["facts"]["protected_changed"] == ["tests/conftest.py"]
    assert steps[-1].reward_components["task"] == 0.0
    assert steps[-1].reward_components["hidden_tests"] == 0.0


def test_partial_credit_and_reward_components() -> None:
    tid = FAMILIES[0].task_id(2, 3)
    _, good = play(tid, oracle(tid))
    comps = good[-1].reward_components
    assert comps["task"] == 1.0 and comps["hidden_tests"] == pytest.approx(0.3)
    assert -0.2 <= comps["diff_cost"] < 0 and comps["step_cost"] == -0.01
    # the fix, then the module of one regression check deleted: partial credit, no task reward
    truth = SweEnv.tasks.resolve(tid).truth
    plan = oracle(tid)
    fixed = {a.arguments["path"] for a in plan if isinstance(a, ToolCall) and "path" in a.arguments}
    regressed = [
        c["target"].split(":")[0].replace(".", "/") + ".py"
        for c in truth["checks"]
        if c["name"].startswith("regression_")
    ]
    wreck = [call("delete_file", path=next(p for p in regressed if p not in fixed))]
    _, partial = play(tid, [*plan[:-1], *wreck, plan[-1]])
    v = verdict(partial)
    assert not v["passed"] and v["reason"] == "hidden_tests_failed"
    assert 0 < v["score"] < 1
    assert partial[-1].reward_components["hidden_tests"] == pytest.approx(0.3 * v["score"])
    bad = play(tid, [call("no_such_tool")])[1][0]
    assert bad.reward_components["invalid_call"] == -0.1
