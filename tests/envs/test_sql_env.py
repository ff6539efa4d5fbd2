"""The sql environment end to end: tasks, episodes, held-out schema, red team, QA."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable

import pytest

from gymforge.core import Reply, SyncEnvironment
from gymforge.envs import BUILTIN
from gymforge.envs.sql import FAMILIES, HELD_OUT_FAMILY, SqlEnv
from gymforge.envs.sql.family import SqlTruth, fixtures
from gymforge.envs.sql.redteam import CASES, fenced
from gymforge.qa import QAReport
from gymforge.qa.checks.verifier_redteam import AttackOutcome, run_attack
from gymforge.tasks import HeldOutError
from gymforge.verify.sql import run_query

SOURCE = SqlEnv.tasks
TRAIN = [f for f in FAMILIES if f.name != HELD_OUT_FAMILY]


@pytest.fixture
def env() -> SyncEnvironment:
    sync = SyncEnvironment(SqlEnv())
    yield sync
    sync.close()


def test_registered_as_builtin() -> None:
    assert BUILTIN["sql"] == "gymforge.envs.sql:SqlEnv"


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_tasks_are_deterministic_discriminating_and_hide_the_gold(family) -> None:
    for level in sorted(family.levels):
        task = family.task(level, 11)
        again = SOURCE.resolve(task.task_id)
        assert (again.prompt, again.truth) == (task.prompt, task.truth)
        assert task.truth["sql"] not in task.prompt
        assert "CREATE TABLE" in task.prompt and "```sql" in task.prompt
        main, shadow = (
            run_query(fx, task.truth["sql"]) for fx in fixtures(SqlTruth.model_validate(task.truth))
        )
        assert main.rows and main.rows != shadow.rows


def test_knobs_reach_every_question_kind() -> None:
    kinds = Counter(
        f.task(level, seed).truth["kind"] for f in TRAIN for level in f.levels for seed in range(40)
    )
    expected = {"list", "top_k", "count", "agg_num", "group_count", "having", "top_count"}
    assert expected | {"above_avg", "not_in"} <= set(kinds)
    distractors = Counter(
        len(f.task(3, seed).truth["distractors"]) for f in TRAIN for seed in range(10)
    )
    assert set(distractors) <= {2, 3}


def test_oracle_succeeds_and_near_misses_fail(env: SyncEnvironment) -> None:
    task_id = FAMILIES[0].task_id(2, 4)
    env.reset(task_id, 0)
    gold = SOURCE.resolve(task_id).truth["sql"]
    result = env.step(Reply(text="Let me think.\n" + fenced(gold)))
    assert result.terminated and result.info["success"]
    assert result.reward_components["task"] == 1.0
    assert result.info["verdict"]["facts"]["fixtures"] == 2
    env.reset(task_id, 0)
    bad = env.step(Reply(text=fenced("SELECT 1")))
    assert not bad.info["success"] and bad.reward_components["task"] == 0.0
    assert bad.info["verdict"]["reason"] in {"wrong_result", "wrong_columns"}


def test_heldout_schema_is_refused_for_training() -> None:
    train = [SOURCE.resolve(t) for t in SOURCE.sample(300, 5, "train")]
    assert {t.family for t in train} == {f.name for f in TRAIN}
    held = [SOURCE.resolve(t) for t in SOURCE.sample(30, 5, "heldout")]
    assert {t.family for t in held} == {HELD_OUT_FAMILY}
    for task in held:
        with pytest.raises(HeldOutError):
            SOURCE.split.check_train(task)
    train_tables = {w for t in train for w in t.prompt.split() if w == "bookings"}
    assert not train_tables  # the flights schema never appears in training prompts


EXPECTED = {
    "sql_delete_then_select": {"multiple_statements", "not_a_select"},
    "sql_cte_delete": {"refused"},
    "sql_update": {"not_a_select"},
    "sql_pragma_writable": {"not_a_select"},
    "sql_attach": {"not_a_select"},
    "sql_load_extension": {"refused"},
    "sql_schema_read": {"refused"},
    "sql_recursive_bomb": {"refused"},
    "sql_cross_join_bomb": {"too_slow"},
    "sql_hardcoded_result": {"wrong_result"},
    "sql_whole_table": {"wrong_result", "wrong_columns"},
    "sql_reversed_order": {"wrong_result"},
    "sql_distractor_column": {"wrong_result", "wrong_columns", "sql_error"},
    "sql_gold_in_reasoning": {"no_answer"},
    "sql_two_queries": {"hedge"},
}


def _attack(case, n: int) -> AttackOutcome:
    pairs = [(task_id, i) for i, task_id in enumerate(SOURCE.sample(n, 21, "all"))]
    return asyncio.run(run_attack(SqlEnv, case.make_policy, pairs))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_redteam_case_is_rejected_for_its_reason(case) -> None:
    outcome = _attack(case, 12)
    ran, breaches, reasons = outcome.ran, outcome.breaches, outcome.reasons
    assert ran >= 2, f"{case.name} applied to only {ran} tasks"
    assert breaches == []
    assert reasons <= EXPECTED[case.name], reasons


def test_every_redteam_case_has_an_expected_reason() -> None:
    assert set(EXPECTED) == {c.name for c in CASES}


@pytest.mark.xdist_group("qa-sql")
def test_passes_all_ten_qa_checks(builtin_qa_report: Callable[[str], QAReport]) -> None:
    """The default run's QA report (``QUICK_QA``), shared with tests/qa's all-built-ins test."""
    report = builtin_qa_report("sql")
    failed = {c.name: c.details for c in report.checks if not c.passed}
    assert not failed
    assert len(report.checks) == 10
