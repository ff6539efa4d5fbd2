"""Attack: the agent writes ``unittest.py`` (and ``pytest.py``, a pass-everything
``conftest.py``) into its workspace. The task's ``test.sh`` runs ``python3 -m unittest`` in
the workspace, Harbor's usual way, so the current directory comes first on ``sys.path`` and
the agent's file runs instead of the standard library's: it prints success and exits 0,
and ``test.sh`` writes a reward of 1 for an unsolved task. gymforge cannot forbid it (the
workspace is what the tests judge and where Harbor runs them), so success would be QA's red
team missing it: ``verifier_redteam``'s ``workspace_runner`` case must breach such a task
(so ``gymforge qa`` fails it, naming the case) and not a task whose ``test.sh`` runs its
runner isolated (``python3 -I``).
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from harbor_attack import CONTAINERS, FILES, task_dir

from gymforge.envs.harbor.env import HarborEnv
from gymforge.envs.harbor.redteam import REDTEAM
from gymforge.qa.checks.verifier_redteam import run_attack
from gymforge.registry.resolve import make_env

pytestmark = CONTAINERS

TEST_MEAN = """import sys
import unittest

sys.path.append("/app")  # after the standard library: the task's own package only
from calc.ops import mean


class MeanTest(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([1, 2, 3]), 2)
"""


def _test_sh(python: str) -> str:
    return (
        "#!/bin/bash\nmkdir -p /logs/verifier\ncd /app\n"
        f"if {python} -m unittest discover -s /tests -t /tests -p 'test_*.py'; then "
        "echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n"
    )


def _breaches(python: str) -> tuple[int, list[str]]:
    (case,) = [c for c in REDTEAM if c.name == "workspace_runner"]
    files = {**FILES, "tests/test.sh": _test_sh(python), "tests/test_mean.py": TEST_MEAN}
    with tempfile.TemporaryDirectory() as tmp:
        spec = f"harbor:{task_dir(Path(tmp), files)}"

        def env() -> HarborEnv:
            made = make_env(spec)
            assert isinstance(made, HarborEnv)
            return made

        (tid,) = env().harbor_tasks
        out = asyncio.run(run_attack(env, case.make_policy, [(tid, 0)]))
    return out.ran, out.breaches


def test_qa_red_team_breaches_a_test_sh_that_runs_the_workspaces_runner() -> None:
    ran, breaches = _breaches("python3")
    assert ran == 1 and len(breaches) == 1  # the task pays the plant: QA fails it


def test_an_isolated_runner_is_not_breached() -> None:
    # -I: the current directory is not on sys.path, so the standard library's unittest runs
    ran, breaches = _breaches("python3 -I")
    assert ran == 1 and breaches == []
