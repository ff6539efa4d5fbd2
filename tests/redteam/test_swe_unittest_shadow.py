"""Attack: pass a task-file ``swe`` task with a ``unittest/`` package instead of a fix.

``python -m unittest ...`` puts the current directory (the repository root) first on
``sys.path``, so a ``unittest/__main__.py`` the agent creates there runs instead of the
standard library's test runner and exits 0: the hidden command "passes" without one test
run. Success of the attack would be a passing verdict (reward 1.29) for a repository whose
bug is still there. The hidden run is built from the original repository with only the
agent's source changes, the runner is imported from the standard library (the repository
is never ahead of it on ``sys.path``), and files shadowing a runner or stdlib module are
dropped.
"""

from __future__ import annotations

from pathlib import Path

from swe_attack import calc_task_file, call, play, swe_env, verdict

from gymforge.verify.code import CodeJudge


def test_a_shadow_unittest_package_does_not_pass(code_judge: CodeJudge, tmp_path: Path) -> None:
    env = swe_env(code_judge, calc_task_file(tmp_path))
    attack = [
        call("create_file", path="unittest/__init__.py", content=""),
        call("create_file", path="unittest/__main__.py", content="raise SystemExit(0)\n"),
    ]
    steps = play(env, "calc-0", attack)
    v = verdict(steps)
    assert not steps[-1].info["success"], v
    assert v["facts"]["hidden_tests"] == {"hidden_command": False}
    assert steps[-1].reward_components["task"] == 0.0
    assert steps[-1].reward_components["hidden_tests"] == 0.0
    assert "unittest/__main__.py" in v["facts"]["dropped_changes"]
