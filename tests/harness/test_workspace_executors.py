"""Workspace mode under the Redis and Ray executors: the run's policy options go to each worker as
JSON (the environment's shell tool, which holds its briefing function, cannot), and each
worker finds the shell tool of the environment it opened itself. A ``redis-server`` on
127.0.0.1 (no persistence), started and stopped by the test."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("redis")

from workspace_helpers import SEED, SYSTEM_PYTHON, program_dir, swe_task_ids, write_plan

from examples.mini_swe_agent.scripted import fix_commands
from gymforge.core.errors import UserError
from gymforge.rollout.executors import executor_for
from gymforge.rollout.executors.redis_worker import worker
from gymforge.rollout.plan import prepare
from gymforge.rollout.runner import RunResult, run
from gymforge.rollout.spec import RunSpec
from gymforge.testing.openai_server import OpenAITestServer
from gymforge.trajectory.io import read_episodes
from tests.rollout.redis_helpers import REDIS_SERVER, redis_server

pytestmark = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    with redis_server(tmp_path) as url:
        yield url


def run_on_redis(url: str, policy: str, out: Path, task: str) -> RunResult:
    with OpenAITestServer() as upstream:
        options: dict[str, Any] = {"base_url": upstream.base_url, "mode": "workspace"}
        spec = RunSpec(
            env="swe",
            policy=policy,
            tasks=[task],
            seed=SEED,
            out=out,
            max_retries=0,
            backend="redis",
        )
        ready = prepare(spec, policy_options=options)
        executor = executor_for(
            ready.spec, ready.handle, ready.source, backend_url=url, policy_options=options
        )

        async def main() -> RunResult:
            stop = asyncio.Event()
            w = asyncio.create_task(worker(url, consumer="w0", block_ms=100, stop_event=stop))
            try:
                return await run(ready.spec, executor)
            finally:
                stop.set()
                await asyncio.wait_for(w, 30)
                if ready.source.close is not None:
                    await ready.source.close()

        return asyncio.run(main())


def test_a_workspace_harness_runs_on_a_redis_worker(redis_url: str, tmp_path: Path) -> None:
    [task] = swe_task_ids(1)
    with program_dir("shell_agent.py") as d:
        plan = write_plan(d, fix_commands(task))
        policy = f"harness-cmd:{SYSTEM_PYTHON} {d / 'shell_agent.py'} {plan}"
        result = run_on_redis(redis_url, policy, tmp_path / "run", task)
    assert not result.errors, result.errors
    [log] = read_episodes(tmp_path / "run" / "trajectories.jsonl")
    actions = [s.action for s in log.steps[1:]]
    assert actions[0].name == "read_issue"  # type: ignore[union-attr]  # the briefing step
    assert {a.name for a in actions[1:-1]} == {"run_command"}  # type: ignore[union-attr]
    assert log.end is not None and log.end.success, log.end  # judged on the worker
    assert log.end.reward > 0.9


def test_a_ray_actor_takes_the_shell_tool_of_its_own_environment() -> None:
    """The Ray actor's policy (its options pickled from the driver, without ``shell``)."""
    from gymforge.registry.handle import open_env
    from gymforge.rollout.executors.ray import _policy_factory

    handle = open_env("swe")
    options = {"base_url": "http://127.0.0.1:9/v1", "mode": "workspace"}
    factory, close = _policy_factory("harness-cmd:true", options, handle.factory)
    try:
        assert factory.shell is not None and factory.shell.name == "run_command"  # type: ignore[attr-defined]
    finally:
        asyncio.run(close())
    with pytest.raises(UserError, match="the ledger environment has no shell tool"):
        _policy_factory("harness-cmd:true", options, open_env("ledger").factory)
