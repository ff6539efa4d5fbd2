"""``harbor:PATH`` through the registry, without an engine: the class, its tasks and QA
declarations; a bad path in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from harbor_helpers import DATASET, minimal_task

from gymforge.core.errors import UserError
from gymforge.core.types import Reply, ToolCall
from gymforge.registry.resolve import make_env


def test_harbor_path_resolves_to_an_environment_serving_its_tasks() -> None:
    env = make_env(f"harbor:{DATASET}")
    assert env.spec.id == f"harbor:{DATASET}"
    ids = [t.task_id for t in env.tasks.datasets[0].tasks]  # type: ignore[attr-defined]
    assert [i.split("@")[0] for i in ids] == [
        "harbor.crashing-test",
        "harbor.hello-shell",
        "harbor.multi-reward",
        "harbor.py-repo",
    ]
    task = env.tasks.resolve(ids[1])  # type: ignore[attr-defined]
    assert task.family == "harbor.shell" and task.prompt.startswith("Create the file")
    assert sorted(env.toolset.tools) == ["read_file", "run", "write_file"]  # type: ignore[attr-defined]
    plan = env.oracle_plan(task)  # type: ignore[attr-defined]
    assert isinstance(plan[-1], Reply)
    assert plan[-2] == ToolCall(
        name="run", arguments={"command": "bash /solution/solve.sh", "timeout": 120}
    )
    na = env.qa.not_applicable  # type: ignore[attr-defined]
    assert "heldout_exclusion" in na and "Harbor" in na["heldout_exclusion"]
    assert "scripted_baselines" not in na  # every fixture task has solve.sh


def test_a_task_without_solution_leaves_the_oracle_checks_not_applicable(tmp_path: Path) -> None:
    minimal_task(tmp_path / "t")
    env = make_env(f"harbor:{tmp_path / 't'}")
    na = env.qa.not_applicable  # type: ignore[attr-defined]
    assert "no solution/solve.sh" in na["scripted_baselines"]
    assert getattr(env, "oracle_action", None) is None


def test_a_path_that_is_no_task_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such directory"):
        make_env(f"harbor:{tmp_path / 'nope'}")
    with pytest.raises(UserError, match="neither a task directory"):
        make_env(f"harbor:{tmp_path}")
