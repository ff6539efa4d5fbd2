"""Attack: make a failing ``swe`` task-file episode unscored with a file in ``.gf-scratch/``.

The post-submit hidden run is a read-only sandbox job whose one writable place is its
scratch directory ``.gf-scratch/``; a job file there is refused. A ``run_command`` that
writes ``.gf-scratch/x`` (a normal job's home directory) once carried that file into the
workspace, and the judge's hidden job raised: a verifier error, left out of success.
Success of the attack would be a verifier error (or any exception) instead of a scored
failure. Files under the sandbox's reserved ``.gf-`` names are refused where the workspace
takes them in: the command's report says so, and the file is never part of the repository.
"""

from __future__ import annotations

from pathlib import Path

from swe_attack import calc_task_file, call, oracle, play, swe_env, tool_result, verdict

from gymforge.envs.swe import FAMILIES
from gymforge.verify.code import CodeJudge

TRICK = call("run_command", command="sh -c 'mkdir -p .gf-scratch && echo x > .gf-scratch/x'")


def test_a_scratch_file_is_refused_where_it_is_taken_in(
    code_judge: CodeJudge, tmp_path: Path
) -> None:
    env = swe_env(code_judge, calc_task_file(tmp_path))
    steps = play(env, "calc-0", [TRICK, call("list_files")])
    made = tool_result(steps[0])["result"]
    assert made["files_changed"] == [] and ".gf-scratch/x" in (made["note"] or ""), made
    assert all(not f["path"].startswith(".gf-") for f in tool_result(steps[1])["result"])
    v = verdict(steps)
    assert "verifier_error" not in steps[-1].info, v
    assert v["reason"] == "no_change" and not steps[-1].info["success"]
    plan = oracle(env, "calc-0")
    fixed = play(env, "calc-0", [*plan[:-1], TRICK, plan[-1]])
    assert fixed[-1].info["success"], verdict(fixed)


def test_the_editor_refuses_reserved_names_too(code_judge: CodeJudge) -> None:
    env = swe_env(code_judge)
    tid = FAMILIES[0].task_id(1, 3)
    steps = play(env, tid, [call("create_file", path=".gf-scratch/x", content="x")])
    assert tool_result(steps[0])["error"]["kind"] == "invalid_arguments"
    assert "verifier_error" not in steps[-1].info
