"""Each deliberately broken environment is flagged by the right QA check, for the right
reason; the unmodified reference environment passes the same checks."""

from __future__ import annotations

import asyncio
import math

import pytest
from broken_envs import (
    EXPECTED,
    CounterLeakEnv,
    CrashOnBadInputEnv,
    HackableVerifierEnv,
    HeldoutLeakEnv,
    LeakyEnv,
    NaNInfoEnv,
    NondeterministicEnv,
    SchemaBreakingEnv,
    TruncationAsTerminationEnv,
)

from gymforge.core.errors import IntegrityError
from gymforge.envs.ledger import LedgerEnv
from gymforge.qa import CHECK_NAMES, QAOptions, QATarget, run_check
from gymforge.qa.checks.common import play
from gymforge.rollout.scripted import OraclePolicy
from gymforge.trajectory.io import seal_episode

OPTS = QAOptions(episodes=12, fuzz_examples=20)

# What the check's details must say: evidence that it caught *this* defect, not any failure.
EVIDENCE: dict[type, tuple[str, ...]] = {
    NondeterministicEnv: ("replay diverged", "diverges at step"),
    LeakyEnv: ("after a finished episode", "differs from the reference", "state audit"),
    HackableVerifierEnv: ("judged a success", "state.claim_0 passed"),
    TruncationAsTerminationEnv: ("terminated=True, truncated=False", "'max_steps'"),
    CrashOnBadInputEnv: ("step raised ValueError", "cannot parse model output"),
    HeldoutLeakEnv: ("TaskSource.sample(train) produced held-out task",),
    SchemaBreakingEnv: ("writer refused a record", "trajectory schema", "tokens"),
}


def test_every_broken_env_names_a_distinct_real_check() -> None:
    assert set(EVIDENCE) == set(EXPECTED)
    assert set(EXPECTED.values()) <= set(CHECK_NAMES)
    assert len(set(EXPECTED.values())) == len(EXPECTED)


@pytest.mark.parametrize("seed", [0, 1], ids=["seed0", "seed1"])
@pytest.mark.parametrize("env_cls", list(EXPECTED), ids=lambda c: c.__name__)
def test_broken_env_is_flagged_by_its_check(env_cls: type, seed: int) -> None:
    name = EXPECTED[env_cls]
    opts = QAOptions(episodes=12, seed=seed, fuzz_examples=20)
    result = run_check(name, QATarget.from_factory(env_cls), opts)
    assert result.name == name
    assert result.applicable
    assert result.passed is False, f"{env_cls.__name__} passed {name}: {result.details}"
    assert not result.details.startswith("nothing to test"), result.details
    for fragment in EVIDENCE[env_cls]:
        assert fragment in result.details, f"{fragment!r} not in: {result.details}"


@pytest.mark.parametrize("name", sorted(set(EXPECTED.values())))
def test_reference_env_passes_the_same_checks(name: str) -> None:
    for seed in (0, 1):
        result = run_check(
            name,
            QATarget.from_factory(LedgerEnv),
            QAOptions(episodes=12, seed=seed, fuzz_examples=20),
        )
        assert result.passed, f"{name} (seed {seed}): {result.details}"
        assert result.applicable


def test_schema_breaking_env_is_tolerated_by_unrelated_checks() -> None:
    """The defect is narrow: fuzzing, baselines and red-teaming never see a success-closing
    observation with a broken token count, so they keep passing."""
    target = QATarget.from_factory(SchemaBreakingEnv)
    for name in ("scripted_baselines", "verifier_redteam", "truncation_accounting"):
        result = run_check(name, target, OPTS)
        assert result.passed, f"{name}: {result.details}"


def test_heldout_leak_env_still_marks_heldout_tasks_on_resolve() -> None:
    """Only the training path leaks: the held-out split and resolve() are intact."""
    tasks = HeldoutLeakEnv.tasks
    heldout = tasks.sample(20, 0, "heldout")
    assert all(tasks.resolve(t).split == "heldout" for t in heldout)
    train = tasks.sample(300, 0, "train")
    assert any(tasks.resolve(t).split == "heldout" for t in train)


# ---- known gaps: broken environments the suite does not flag --------------------------
def _transfer_ids_after_oracle_episodes(env: LedgerEnv, task_id: str, seeds: list[int]) -> list:
    async def go() -> list:
        ids = []
        for seed in seeds:
            records = await play(env, OraclePolicy(), task_id, seed)
            ids.append(
                [
                    r["tool_result"]["content"]["transfer_id"]
                    for r in records[1:-1]
                    if r["action"]["kind"] == "tool_call"
                    and r["action"]["name"] == "transfer"
                    and r["tool_result"]["ok"]
                ]
            )
        await env.close()
        return ids

    return asyncio.run(go())


def test_counter_leak_env_really_breaks_the_contract() -> None:
    """Rule 1 of the contract: same (task_id, seed) and actions, same observations. Here a
    reused instance gives different transfer ids than a fresh one for the same episode."""
    task_id = "ledger.transfer/v1/d1/s7"
    fresh = _transfer_ids_after_oracle_episodes(CounterLeakEnv(), task_id, [3])
    reused = _transfer_ids_after_oracle_episodes(CounterLeakEnv(), task_id, [3, 3])
    assert fresh == [["T1"]]
    assert reused == [["T1"], ["T2"]]  # the second, identical episode diverges


def test_counter_leak_is_flagged_by_reset_isolation() -> None:
    result = run_check("reset_isolation", QATarget.from_factory(CounterLeakEnv), OPTS)
    assert result.passed is False, result.details
    assert "differs from the reference" in result.details


def test_counter_leak_is_flagged_by_replay_determinism() -> None:
    result = run_check("replay_determinism", QATarget.from_factory(CounterLeakEnv), OPTS)
    assert result.passed is False, result.details
    assert "replay diverged" in result.details


def test_nan_in_info_is_flagged_by_trajectory_schema() -> None:
    result = run_check("trajectory_schema", QATarget.from_factory(NaNInfoEnv), OPTS)
    assert result.passed is False, result.details
    assert "not JSON" in result.details


def _oracle_records() -> list[dict]:
    async def go() -> list[dict]:
        env = LedgerEnv()
        try:
            return await play(env, OraclePolicy(), "ledger.transfer/v1/d1/s7", 3)
        finally:
            await env.close()

    return asyncio.run(go())


def test_writer_refuses_nan_in_info() -> None:
    records = _oracle_records()
    records[1]["info"]["confidence"] = math.nan
    with pytest.raises(IntegrityError):
        lines = seal_episode(records)
        raise AssertionError(f"sealed as: {lines[1][:300]}")


def test_writer_refuses_non_finite_reward_as_integrity_error() -> None:
    records = _oracle_records()
    records[1]["reward"] = math.inf
    records[1]["reward_components"] = {"task": math.inf}
    with pytest.raises(IntegrityError, match="record 1"):
        seal_episode(records)


def test_sanity_the_gap_envs_play_normally() -> None:
    """The oracle still solves the gap envs: their defects are silent, not crashes."""
    for env_cls in (CounterLeakEnv, NaNInfoEnv):
        result = run_check("scripted_baselines", QATarget.from_factory(env_cls), OPTS)
        assert result.passed, f"{env_cls.__name__}: {result.details}"
