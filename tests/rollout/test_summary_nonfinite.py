"""A reward that is not a finite number (an environment's reward function gave one): no
trajectory file can hold it (the writer refuses the record, naming it), but a run kept in
memory and a direct ``summarize`` still summarise it, with figures that say so (IEEE:
the mean is inf or nan, a group's standard deviation nan), never an exception from
inside ``statistics``; finite groups keep their exact figures."""

from __future__ import annotations

import asyncio
import math
import statistics
from pathlib import Path
from typing import Any

import pytest

from gymforge.core.errors import IntegrityError
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import LocalExecutor, OraclePolicy, RunSpec, run
from gymforge.rollout.summary import Tally, group_stats, summarize
from tests.episode_rows import episode_row

PAIRS = [(t, 5) for t in LedgerEnv.tasks.sample(2, 0)]


def bonus_env(value: float) -> type[LedgerEnv]:
    class Bonus(LedgerEnv):
        def extra_reward(self) -> dict[str, float]:
            return {"bonus": value}

    return Bonus


def episode(task: str, seed: int, reward: float) -> dict[str, Any]:
    return episode_row(0, reward=reward, task_id=task, seed=seed)


@pytest.mark.parametrize("value", [math.inf, -math.inf, 1e308])  # 1e308 a step: inf in total
def test_a_run_in_memory_summarises_a_non_finite_reward(value: float) -> None:
    result = asyncio.run(
        run(
            RunSpec(env="ledger", policy="oracle", jobs=PAIRS, group=2),
            LocalExecutor(bonus_env(value), OraclePolicy),
        )
    )
    s = result.summary
    assert s["episodes"] == 4 and not math.isfinite(s["mean_reward"])
    assert math.isnan(s["mean_group_reward_std"])
    assert all(not math.isfinite(e["reward"]) for e in result.episodes)


def test_a_written_run_refuses_the_record_and_names_it(tmp_path: Path) -> None:
    """The error names the record and the field: the environment's bug, found at once."""
    named = r"record \d+ of episode \S+ is not JSON: .*reward_components.bonus: inf is not JSON"
    with pytest.raises(IntegrityError, match=named):
        asyncio.run(
            run(
                RunSpec(env="ledger", policy="oracle", jobs=PAIRS, group=2, out=tmp_path),
                LocalExecutor(bonus_env(math.inf), OraclePolicy),
            )
        )


@pytest.mark.parametrize(
    ("rewards", "mean"),
    [
        ([math.inf, 1.0], math.inf),
        ([-math.inf, 1.0], -math.inf),
        ([math.inf, math.inf], math.inf),
        ([math.nan, 1.0], math.nan),
        ([math.inf, -math.inf], math.nan),  # fsum raises ValueError here
        ([1.7e308, 1.7e308, math.inf], math.inf),  # fsum raises OverflowError here
    ],
)
def test_non_finite_figures(rewards: list[float], mean: float) -> None:
    group = [episode("t", 0, r) for r in rewards]
    finite = [episode("u", 1, r) for r in (0.25, 1.0, 0.5)]
    s = summarize(group + finite)
    assert repr(s["mean_reward"]) == repr(mean)
    assert repr(Tally(group + finite).mean_reward) == repr(mean)
    assert math.isnan(s["mean_group_reward_std"]) and s["groups"] == 2
    alone = group_stats(finite)
    assert alone["mean_group_reward_std"] == statistics.pstdev([0.25, 1.0, 0.5])


def test_huge_finite_group_deviations_do_not_overflow_their_mean() -> None:
    """Two groups whose deviations are near the largest float: their sum overflows, their
    mean does not."""
    groups = [episode(t, 0, r) for t in "ab" for r in (1.7e308, -1.7e308)]
    assert group_stats(groups)["mean_group_reward_std"] == 1.7e308
