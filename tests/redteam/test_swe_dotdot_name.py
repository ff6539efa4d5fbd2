"""Attack: make a failing ``swe`` episode unscored with a file named ``..oops``.

``run_command`` can create any file name; ``..oops`` (a legal name that merely starts with
two dots) once reached the judge, whose sandbox job refused it as a path escaping the job
directory: the judge raised, the episode became a verifier error, and verifier errors are
left out of success. Success of the attack would be a verdict of ``verifier_error`` (or any
exception) instead of a scored failure; the same name next to the real fix must not cost the
fix either.
"""

from __future__ import annotations

from pathlib import Path

from swe_attack import calc_task_file, call, oracle, play, swe_env, tool_result, verdict

from gymforge.envs.swe import FAMILIES
from gymforge.verify.code import CodeJudge

TRICK = call("run_command", command="sh -c 'echo gotcha > ..oops'")


def test_a_dot_dot_name_is_a_file_not_a_verifier_error(code_judge: CodeJudge) -> None:
    env = swe_env(code_judge)
    tid = FAMILIES[0].task_id(1, 3)
    steps = play(env, tid, [TRICK])
    made = tool_result(steps[0])["result"]
    assert made["exit_code"] == 0 and made["files_changed"] == ["..oops"]
    v = verdict(steps)
    assert "verifier_error" not in steps[-1].info, v
    assert v["reason"] == "hidden_tests_failed" and not steps[-1].info["success"]
    fixed = play(env, tid, [*oracle(env, tid)[:-1], TRICK, oracle(env, tid)[-1]])
    assert fixed[-1].info["success"], verdict(fixed)


def test_a_dot_dot_name_in_post_submit_mode(code_judge: CodeJudge, tmp_path: Path) -> None:
    env = swe_env(code_judge, calc_task_file(tmp_path))
    steps = play(env, "calc-0", [TRICK])
    assert "verifier_error" not in steps[-1].info, verdict(steps)
    assert verdict(steps)["reason"] == "hidden_tests_failed"
    fixed = play(env, "calc-0", [*oracle(env, "calc-0")[:-1], TRICK, oracle(env, "calc-0")[-1]])
    assert fixed[-1].info["success"], verdict(fixed)
