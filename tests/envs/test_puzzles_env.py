"""The puzzles environment end to end: episodes, held-out split, red team, the QA suite."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable

import pytest

from gymforge.core import Invalid, Reply, SyncEnvironment
from gymforge.envs import BUILTIN
from gymforge.envs.puzzles import FAMILIES, PuzzlesEnv
from gymforge.envs.puzzles.redteam import CASES
from gymforge.qa import QAReport
from gymforge.qa.checks.verifier_redteam import AttackOutcome, run_attack
from gymforge.tasks import HeldOutError

SOURCE = PuzzlesEnv.tasks


@pytest.fixture
def env() -> SyncEnvironment:
    sync = SyncEnvironment(PuzzlesEnv())
    yield sync
    sync.close()


def oracle_text(env: SyncEnvironment) -> str:
    action = asyncio.run(env.env.oracle_action())
    assert isinstance(action, Reply)
    return action.text


def test_registered_as_builtin() -> None:
    assert BUILTIN["puzzles"] == "gymforge.envs.puzzles:PuzzlesEnv"


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_oracle_episode_succeeds_in_one_step(env: SyncEnvironment, family) -> None:
    for level in sorted(family.levels):
        task_id = family.task_id(level, 5)
        obs = env.reset(task_id, 0)
        assert obs.tools == ()
        assert "Answer:" in obs.text()
        result = env.step(Reply(text="Let me think.\n" + oracle_text(env)))
        assert result.terminated and not result.truncated
        assert result.info["success"] is True
        assert result.reward_components["task"] == 1.0


def test_wrong_answers_fail_with_reason_in_facts(env: SyncEnvironment) -> None:
    task_id = FAMILIES[0].task_id(1, 1)
    for text, reason in [
        ("", "no_answer"),
        ("Answer: 1 + 2\nAnswer: 2 + 3", "hedge"),
        ("Answer: __import__('os')", "parse_error"),
    ]:
        env.reset(task_id, 0)
        result = env.step(Reply(text=text))
        assert result.terminated and not result.info["success"]
        verdict = result.info["verdict"]
        assert verdict["reason"] == verdict["facts"]["reason"] == reason
        assert result.reward_components["task"] == 0.0


def test_think_block_answer_is_ignored(env: SyncEnvironment) -> None:
    env.reset(FAMILIES[1].task_id(1, 2), 0)
    good = oracle_text(env)
    result = env.step(Reply(text=f"<think>{good}</think>\nAnswer: 1111/1111/1111/1111"))
    assert result.info["verdict"]["reason"] == "givens_changed"
    env.reset(FAMILIES[1].task_id(1, 2), 0)
    result = env.step(Reply(text=f"<think>{good}</think>"))
    assert result.info["verdict"]["reason"] == "no_answer"


def test_malformed_output_recovers_then_a_reply_is_judged(env: SyncEnvironment) -> None:
    env.reset(FAMILIES[2].task_id(1, 3), 0)
    first = env.step(Invalid(raw="<tool_call>{", error="unterminated JSON"))
    assert not first.done
    second = env.step(Reply(text=oracle_text(env)))
    assert second.terminated and second.info["success"]


def test_reply_over_the_token_budget_is_truncated(env: SyncEnvironment) -> None:
    env.reset(FAMILIES[0].task_id(1, 4), 0)
    assert PuzzlesEnv.budget.max_tokens is not None
    huge = oracle_text(env) + "\n" + "z " * (PuzzlesEnv.budget.max_tokens * 4)
    result = env.step(Reply(text=huge))
    assert result.truncated and not result.terminated
    assert result.info["end_reason"] == "max_tokens" and not result.info["success"]
    assert "task" not in result.reward_components or result.reward_components["task"] <= 0


def test_train_sampling_never_yields_heldout_and_covers_every_family() -> None:
    ids = SOURCE.sample(2000, 17, "train")
    tasks = [SOURCE.resolve(t) for t in ids]
    assert all(t.split == "train" for t in tasks)
    for task in tasks[:200]:
        assert SOURCE.split.check_train(task) is task
    families = Counter(t.family for t in tasks)
    assert set(families) == {f.name for f in FAMILIES}
    assert min(families.values()) > 2000 / len(FAMILIES) / 2
    levels = {(t.family, t.difficulty) for t in tasks}
    assert levels == {(f.name, d) for f in FAMILIES for d in f.levels}


def test_every_family_has_a_refused_heldout_region() -> None:
    held = [SOURCE.resolve(t) for t in SOURCE.sample(400, 3, "heldout")]
    assert {t.family for t in held} == {f.name for f in FAMILIES}
    for task in held:
        assert task.split == "heldout"
        with pytest.raises(HeldOutError):
            SOURCE.split.check_train(task)


PREFIX = {
    "puzzles.countdown": "countdown",
    "puzzles.sudoku": "sudoku",
    "puzzles.knights_knaves": "kk",
    "puzzles.shortest_path": "path",
    "puzzles.coloring": "coloring",
}
EXPECTED = {
    "countdown_number_twice": "uses_number_twice",
    "countdown_target_literal": "number_not_given",
    "countdown_import_injection": "parse_error",
    "countdown_division_by_zero": "division_by_zero",
    "countdown_unary_minus_forbidden": "parse_error",
    "sudoku_givens_changed": "givens_changed",
    "sudoku_duplicate": "duplicate_in_",
    "sudoku_echo_puzzle": "incomplete",
    "sudoku_two_grids": "parse_error",
    "kk_all_knights": "violates_clue",
    "kk_both_labels": "conflicting_labels",
    "kk_flip_one": "violates_clue",
    "kk_either_label": "parse_error",
    "path_not_shortest": "not_shortest",
    "path_skips_edge": "not_a_path",
    "path_stops_short": "wrong_end",
    "coloring_one_color": "conflict",
    "coloring_extra_color": "bad_color",
    "coloring_conflict": "conflict",
}


def _attack(case, family, n: int) -> AttackOutcome:
    levels = sorted(family.levels)
    pairs = [(family.task_id(levels[i % len(levels)], 100 + i), i) for i in range(n)]
    return asyncio.run(run_attack(PuzzlesEnv, case.make_policy, pairs))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_redteam_case_is_rejected_on_its_family(case) -> None:
    family = next(f for f in FAMILIES if case.name.startswith(PREFIX[f.name]))
    outcome = _attack(case, family, 24)
    ran, breaches, reasons = outcome.ran, outcome.breaches, outcome.reasons
    assert ran >= 6, f"{case.name} applied to only {ran} tasks"
    assert breaches == []
    assert all(r.startswith(EXPECTED[case.name]) for r in reasons), reasons


def test_every_redteam_case_has_an_expected_reason() -> None:
    assert set(EXPECTED) == {c.name for c in CASES}


@pytest.mark.xdist_group("qa-puzzles")
def test_passes_all_ten_qa_checks(builtin_qa_report: Callable[[str], QAReport]) -> None:
    """The default run's QA report (``QUICK_QA``), shared with tests/qa's all-built-ins test."""
    report = builtin_qa_report("puzzles")
    failed = {c.name: c.details for c in report.checks if not c.passed}
    assert not failed
    assert len(report.checks) == 10
