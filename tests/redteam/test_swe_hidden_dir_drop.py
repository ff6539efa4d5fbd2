"""Attack: pass a task-file ``swe`` task by dropping a file into the hidden tests' directory.

The hidden tests (``hidden/``) are laid over the agent's files only for the hidden run, and
``unittest discover -s hidden`` imports every ``test*.py`` there before running any: an
agent-made ``hidden/test_aaa.py`` that exits with status 0 on import ends the run "passed"
before the real test runs. Success of the attack would be a passing verdict for an unfixed
repository. New files in the hidden tests' directories never reach the hidden run.
"""

from __future__ import annotations

from pathlib import Path

from swe_attack import EXIT_ZERO, calc_task_file, call, play, swe_env, verdict

from gymforge.verify.code import CodeJudge


def test_a_file_dropped_into_the_hidden_dir_is_left_out(
    code_judge: CodeJudge, tmp_path: Path
) -> None:
    env = swe_env(code_judge, calc_task_file(tmp_path))
    for path in ("hidden/test_aaa.py", "hidden/__init__.py"):
        steps = play(env, "calc-0", [call("create_file", path=path, content=EXIT_ZERO)])
        v = verdict(steps)
        assert not steps[-1].info["success"], (path, v)
        assert v["facts"]["hidden_tests"] == {"hidden_command": False}, path
        assert v["facts"]["dropped_changes"] == [path]
        assert steps[-1].reward_components["hidden_tests"] == 0.0
