"""``trajectory.outcome``: the one rule for what an episode counts as, and proof that the run
summary, the eval metrics and the calibration rows all count with it (a verifier error after
the agent acted is a counted failure; only one before any action is left out)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gymforge.calibrate import CalibrateConfig
from gymforge.calibrate.pipeline import calibration_rows
from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Observation, Reply
from gymforge.envs.ledger import LedgerEnv
from gymforge.evaluate.episodes import stats_from_records
from gymforge.evaluate.metrics import compute_metrics
from gymforge.rollout.episode import run_episode
from gymforge.rollout.summary import summarize
from gymforge.trajectory.outcome import (
    VERIFIER_ERROR,
    classify_outcome,
    count_outcomes,
    is_verifier_error,
    verifier_error_reason,
)
from gymforge.trajectory.schema import EpisodeKeys
from tests.episode_rows import episode_row


def end_record(i: int, success: bool, reason: str | None, steps: int) -> dict[str, Any]:
    return episode_row(i, success=success, reason=reason, steps=steps)


REASONS = st.sampled_from(
    ["wrong", "max_steps", VERIFIER_ERROR, "verifier_error: ValueError", "verifier_errors", None]
)
ENDS = st.lists(st.tuples(st.booleans(), REASONS, st.integers(0, 4)), max_size=30).map(
    lambda rows: [end_record(i, *row) for i, row in enumerate(rows)]
)


@given(st.booleans(), REASONS, st.integers(0, 50))
def test_the_rule(success: bool, reason: str | None, steps: int) -> None:
    o = classify_outcome(end_record(0, success, reason, steps))
    crashed = not success and reason in (VERIFIER_ERROR, "verifier_error: ValueError")
    assert o.success == success and o.verifier_error == crashed
    assert o.counted == (not crashed or steps > 0)  # unscored: crashed before any action
    assert o.reason == (None if success else reason)


def test_a_reason_that_only_starts_like_one_is_not_a_verifier_error() -> None:
    assert is_verifier_error("verifier_error") and is_verifier_error("verifier_error: KeyError")
    assert not is_verifier_error("verifier_errors") and not is_verifier_error(None)


@given(st.text(max_size=80))
def test_the_recorded_reason_holds_a_type_name_and_nothing_else(error: str) -> None:
    info = {
        "verifier_error": True,
        "verdict": {"reason": VERIFIER_ERROR, "facts": {"error": error}},
    }
    reason = verifier_error_reason(info)
    assert reason is not None and is_verifier_error(reason)
    kind = reason.removeprefix(VERIFIER_ERROR).removeprefix(": ")
    assert kind == "" or kind.isidentifier()


def test_the_reason_names_the_exception() -> None:
    facts = {"error": "ZeroDivisionError: checker bug: x"}
    assert verifier_error_reason({"verdict": {"reason": VERIFIER_ERROR, "facts": facts}}) == (
        "verifier_error: ZeroDivisionError"
    )
    assert verifier_error_reason({"verifier_error": True}) == VERIFIER_ERROR
    assert verifier_error_reason({"verdict": {"reason": "wrong", "facts": facts}}) is None


@given(ENDS)
def test_summary_metrics_and_calibration_count_alike(ends: list[dict[str, Any]]) -> None:
    counts = count_outcomes(classify_outcome(e) for e in ends)
    summary = summarize(ends)
    stats = [stats_from_records([e]) for e in ends]
    m = compute_metrics(stats)
    assert summary["episodes"] == m["episodes"] == counts.episodes
    assert summary["verifier_errors"] == m["verifier_errors"] == counts.verifier_errors
    assert summary["unscored"] == m["unscored"] == counts.unscored
    assert summary["success_rate"] == pytest.approx(m["success"]["rate"] or 0.0)
    assert summary["verifier_error_rate"] == pytest.approx(m["verifier_error"]["rate"] or 0.0)
    task_ids = sorted({s.task_id for s in stats})
    rows = calibration_rows(stats, _Tasks(), task_ids, [], CalibrateConfig("e", "p"))
    assert sum(r["n"] for r in rows) == counts.episodes
    assert sum(r["successes"] for r in rows) == counts.successes
    assert sum(r["verifier_errors"] for r in rows) == counts.verifier_errors


class _Tasks:
    def resolve(self, task_id: str) -> Any:
        return type("T", (), {"family": "fam", "difficulty": 1, "split": "train"})()


class CrashingLedger(LedgerEnv):
    def verify(self, task, world, reply):  # type: ignore[no-untyped-def]
        raise ZeroDivisionError("checker bug")


class Done:
    name = checkpoint = "done"

    async def start(self, ctx: EpisodeContext) -> None:
        return None

    async def act(self, observation: Observation) -> PolicyTurn:
        return PolicyTurn(Reply(text="done"))


def test_a_judge_that_raises_after_the_agent_acted_closes_a_counted_failure() -> None:
    env = CrashingLedger()
    task_id = env.tasks.sample(1, 0)[0]
    keys = EpisodeKeys(
        run_id="r",
        episode_id="e",
        task_id=task_id,
        seed=0,
        env_id=env.spec.id,
        env_version=env.spec.version,
        renderer_version=env.spec.renderer_version,
        policy_checkpoint="done",
    )
    try:
        records = asyncio.run(run_episode(env, Done(), keys))
    finally:
        asyncio.run(env.close())
    end = records[-1]
    assert end["failure_reason"] == "verifier_error: ZeroDivisionError" and end["steps"] == 1
    outcome = classify_outcome(end)
    assert outcome.counted and not outcome.success and outcome.verifier_error
    assert summarize([end])["success_rate"] == 0.0
