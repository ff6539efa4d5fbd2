"""Attack: pass a task-file ``swe`` task with a file the test runner or the interpreter loads
on its own: a ``conftest.py``, ``sitecustomize.py``/``usercustomize.py``, a ``.pth`` file, or
a module named like a standard-library module the runner imports (``argparse.py``,
``json.py`` at the repository root), each exiting with status 0 when imported.

Success of the attack would be a passing verdict for an unfixed repository: the agent's
code would run before (or instead of) the judge's tests without the tests ever importing it.
None of these files reaches the hidden run, and the repository is never ahead of the
standard library on ``sys.path``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from swe_attack import EXIT_ZERO, calc_task_file, call, play, swe_env, verdict

from gymforge.verify.code import CodeJudge

HOOKS = [
    "conftest.py",
    "hidden/conftest.py",
    "sitecustomize.py",
    "usercustomize.py",
    "calc/zz.pth",
    "argparse.py",
    "json.py",
    "scripts/types.py",
]


@pytest.mark.parametrize("path", HOOKS)
def test_a_start_up_hook_or_shadow_module_is_dropped(
    code_judge: CodeJudge, tmp_path: Path, path: str
) -> None:
    env = swe_env(code_judge, calc_task_file(tmp_path))
    content = (
        "import os\n" + EXIT_ZERO if not path.endswith(".pth") else EXIT_ZERO.replace("\n", ";")
    )
    steps = play(env, "calc-0", [call("create_file", path=path, content=content)])
    v = verdict(steps)
    assert not steps[-1].info["success"], v
    assert v["facts"]["hidden_tests"] == {"hidden_command": False}
    assert v["facts"]["dropped_changes"] == [path]
