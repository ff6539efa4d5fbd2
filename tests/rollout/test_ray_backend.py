"""The Ray rollout backend on a local ``ray.init``: async actors consumed with ``ray.wait``,
each episode written exactly once, and an actor killed mid-run costs no job and duplicates
none."""

from __future__ import annotations

import asyncio
import os
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gymforge.core.types import Observation
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import OraclePolicy, PolicyTurn, expand
from gymforge.trajectory.check import check_file as check_sealed
from gymforge.trajectory.io import read_episodes, verify_chain

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.xdist_group("ray")  # one local Ray cluster at a time under xdist

PAIRS = [(t, 5) for t in LedgerEnv.tasks.sample(20, 0)]


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    os.environ["RAY_AUTH_MODE"] = "disabled"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # SlowOracle below
    try:
        yield
    finally:
        ray.shutdown()


def check_file(out: Path, n: int) -> list[Any]:
    logs = read_episodes(out / "trajectories.jsonl")
    for log in logs:
        verify_chain(log)
    keys = Counter((g.end.task_id, g.end.seed, g.end.rollout) for g in logs if g.end)
    assert len(logs) == n and len(keys) == n and max(keys.values()) == 1
    assert len({g.episode_id for g in logs}) == n
    return logs


def test_ledger_oracle_through_ray(local_ray: None, tmp_path: Path) -> None:
    from gymforge.rollout.backends.ray_actors import run_ray

    jobs = expand(PAIRS, group=2)  # 40 episodes
    result = asyncio.run(
        run_ray(
            "ledger",
            "oracle",
            jobs,
            tmp_path,
            run_id="raytest",
            actors=2,
            max_concurrency=8,
            seal_key=b"ray driver seal key",
        )
    )
    s = result.summary
    assert s["episodes"] == 40 and s["success_rate"] == 1.0 and s["backend"] == "ray"
    assert s["infra_errors"] == 0 and s["actor_restarts"] == 0 and result.errors == []
    logs = check_file(tmp_path, 40)
    assert {g.episode_id for g in logs} == {f"raytest-{j.index:06d}" for j in jobs}
    assert (tmp_path / "summary.json").exists()
    sealed = check_sealed(tmp_path / "trajectories.jsonl", b"ray driver seal key")
    assert sealed.finished and sealed.run_seals == 1 and len(sealed.episodes) == 40


class SlowOracle(OraclePolicy):
    """The oracle, 50 ms per turn: keeps episodes in flight long enough to kill an actor."""

    async def act(self, observation: Observation) -> PolicyTurn:
        await asyncio.sleep(0.05)
        return await super().act(observation)


def test_killed_actor_jobs_complete_exactly_once(local_ray: None, tmp_path: Path) -> None:
    from gymforge.rollout.backends.ray_actors import run_ray

    actors: list[Any] = []
    killed: list[Any] = []

    def on_episode(_rec: dict[str, Any]) -> None:
        if not killed and actors:
            killed.append(actors[0])
            ray.kill(actors[0], no_restart=True)  # mid-run: the other jobs are in flight

    jobs = expand(PAIRS, group=2)
    result = asyncio.run(
        run_ray(
            "ledger",
            SlowOracle,
            jobs,
            tmp_path,
            actors=2,
            max_concurrency=8,
            on_episode=on_episode,
            on_actors=lambda handles: actors.__setitem__(slice(None), handles),
        )
    )
    s = result.summary
    assert killed and s["actor_restarts"] == 1 and s["infra_retries"] >= 1
    assert s["episodes"] == 40 and s["success_rate"] == 1.0 and s["infra_errors"] == 0
    check_file(tmp_path, 40)
