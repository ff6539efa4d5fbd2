"""Attack: make the ``swe`` judge raise with a file named like the hidden tests' directory.

In a task file's command mode the hidden tests (``hidden/test_hidden.py``) are laid over the
built tree. An agent that creates a plain file ``hidden`` (or replaces a protected file with
a directory, whose deletion the judge drops while it keeps the new files under it) gave the
hidden run a tree with a file where a directory must be: the sandbox could not lay it out,
and the judge raised (``FileExistsError``), a verifier error instead of the hidden tests'
verdict. Success of the attack would be any verifier error, or a verdict that did not run
the hidden tests on the agent's fix.
"""

from __future__ import annotations

from pathlib import Path

from swe_attack import calc_task_file, call, oracle, play, swe_env, verdict

from gymforge.verify.code import CodeJudge


def test_a_file_where_the_hidden_tests_go_changes_nothing(
    code_judge: CodeJudge, tmp_path: Path
) -> None:
    env = swe_env(code_judge, calc_task_file(tmp_path))
    plan = oracle(env, "calc-0")
    squat = call("create_file", path="hidden", content="x\n")
    steps = play(env, "calc-0", [*plan[:-1], squat, plan[-1]])
    v = verdict(steps)
    print(v["reason"], v["facts"].get("error"), v["facts"].get("dropped_changes"))
    assert not steps[-1].info.get("verifier_error"), v
    assert v["passed"] and v["facts"]["hidden_tests"] == {"hidden_command": True}, v
    assert v["facts"]["dropped_changes"] == ["hidden"]


def test_a_protected_file_turned_into_a_directory_is_judged(
    code_judge: CodeJudge, tmp_path: Path
) -> None:
    env = swe_env(code_judge, calc_task_file(tmp_path, extra={"pyproject.toml": "[x]\n"}))
    plan = oracle(env, "calc-0")
    script = "rm pyproject.toml && mkdir pyproject.toml && echo x=1 > pyproject.toml/x.py"
    swap = call("run_command", command=f"sh -c '{script}'")
    steps = play(env, "calc-0", [*plan[:-1], swap, plan[-1]])
    v = verdict(steps)
    print(v["reason"], v["facts"].get("error"), v["facts"].get("dropped_changes"))
    assert not steps[-1].info.get("verifier_error"), v
    assert v["reason"] == "protected_files_changed"
    assert v["facts"]["hidden_tests"] == {"hidden_command": True}, v  # the fix, judged
