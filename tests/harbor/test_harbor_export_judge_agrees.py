"""The exported ``code``/``code-agent`` verifier (``tests/judge.py``, run directly in one job of
gymforge's sandbox, no engine)
scores as gymforge's code judge and ``CodeReward`` score: on the oracle and on a battery of
wrong and hostile answers (``export_battery``: exit early, ``os._exit(0)``, fake pass
markers, a monkeypatched harness, a planted ``conftest.py``, timeouts, crashes, wrong types),
the reward components ``reward.json`` holds are the ones the ``code`` environment pays (its
``step_cost`` aside, an episode's cost, not the answer's), for every task exported."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from export_battery import BATTERY
from harbor_helpers import judge_in_sandbox

from gymforge.envs.code.env import CodeReward
from gymforge.integrations.harbor_export import export_tasks
from gymforge.registry.resolve import make_env
from gymforge.reward.standard import StepCosts
from gymforge.sandbox.backend import IsolationUnavailableError
from gymforge.sandbox.preflight import require_sandbox
from gymforge.verify.code import CodeJudge
from gymforge.verify.services import current


@pytest.fixture(scope="module")
def judge() -> CodeJudge:
    try:
        require_sandbox({"python"}, current().settings)
    except IsolationUnavailableError as e:
        pytest.skip(str(e))
    return CodeJudge()


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[dict[str, Any], Path]]:
    env = make_env("code-agent")
    tasks = [env.tasks.resolve(i) for i in env.tasks.sample(3, 7, "train")]  # type: ignore[attr-defined]
    out = tmp_path_factory.mktemp("export")
    dirs = export_tasks("code-agent", tasks, out)
    return [(t.truth, d) for t, d in zip(tasks, dirs, strict=True)]


def script_components(task_dir: Path, solution: str) -> dict[str, float]:
    logs = judge_in_sandbox(task_dir, {"solution.py": solution})
    assert sorted(logs) == ["reward.json"]
    return dict(json.loads(logs["reward.json"]))


def gymforge_components(judge: CodeJudge, truth: dict[str, Any], solution: str) -> dict[str, float]:
    verdict = asyncio.run(judge.ajudge(truth, f"```python\n{solution}\n```", "python"))
    out = CodeReward()(verdict, StepCosts())
    out.pop("step_cost")
    return out


@pytest.mark.parametrize("answer", sorted(BATTERY))
def test_the_exported_verifier_scores_as_the_code_judge(
    answer: str, judge: CodeJudge, exported: list[tuple[dict[str, Any], Path]]
) -> None:
    # the answer that waits out the judges' time limit on one task, the others on all three:
    # the limit is each judge's, not the task's (times_out took 12 s over the three)
    for truth, task_dir in exported[:1] if answer == "times_out" else exported:
        solution = BATTERY[answer](str(truth["entry_point"]), str(truth["reference"]))
        got = script_components(task_dir, solution)
        want = gymforge_components(judge, truth, solution)
        assert got.keys() == want.keys(), (task_dir.name, got, want)
        assert got == pytest.approx(want), (task_dir.name, got, want)
        assert (got["task"] == 1.0) == (answer == "oracle"), (task_dir.name, got)
