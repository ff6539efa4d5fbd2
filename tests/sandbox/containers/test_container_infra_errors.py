"""A sandbox that fails as infrastructure (its worker or engine gone: ``internal_error``)
makes the code judge raise ``InfraError`` out of the episode, which runners retry and never
score, instead of a ``verifier_error`` verdict written with reward 0. No engine needed: the
backend here reports what a dead container worker reports (the real engine-stop run is
``test_container_engine_stops.py``)."""

from __future__ import annotations

import asyncio

import pytest

from gymforge.core.errors import InfraError
from gymforge.envs.code import CodeEnv
from gymforge.sandbox import BaseBackend, Result, SandboxJob, Status
from gymforge.verify.code import CodeJudge


class DeadEngine(BaseBackend):
    """Every job: the ``internal_error`` a backend gives when its worker died twice."""

    name = "docker"
    capacity = 1

    def run(self, job: SandboxJob) -> Result:
        return Result(status=Status.INTERNAL_ERROR, error="worker 0 did not start: engine stopped")


async def _episode(env: CodeEnv) -> None:
    task_id = next(iter(env.tasks.sample(1, seed=0)))
    await env.reset(task_id, 0)
    await env.step(await env.oracle_action())


def test_a_dead_sandbox_is_an_infrastructure_error_not_a_verdict() -> None:
    backend = DeadEngine()
    env = CodeEnv(judge=CodeJudge(backend))
    with pytest.raises(InfraError, match="engine stopped"):
        asyncio.run(_episode(env))
    backend.close()
