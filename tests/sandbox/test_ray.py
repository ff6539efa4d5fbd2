"""The Ray pool backend on a local ``ray.init``: jobs spread over actors that each run a
``LocalBackend``, consumed with ``ray.wait``; judge functions run next to the sandbox."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from sandbox_helpers import UID_BASE, processes_of_uids

from gymforge.sandbox import Call, Limits, SandboxJob, Status
from gymforge.sandbox.doctor import bwrap_works

ray = pytest.importorskip("ray")
pytestmark = [
    pytest.mark.skipif(not bwrap_works()[0], reason="bubblewrap sandbox unavailable"),
    pytest.mark.slow,
    pytest.mark.xdist_group("ray"),  # one local Ray cluster at a time under xdist
]  # ~15-20 s, mostly ray.init and the actor's start
UIDS = {UID_BASE + 70, UID_BASE + 71}


@pytest.fixture(scope="module")
def pool() -> Iterator[Any]:
    from gymforge.sandbox.ray_pool import RayBackend

    os.environ["RAY_AUTH_MODE"] = "disabled"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # judge_add below
    backend = RayBackend(actors=1, workers_per_actor=2, backend_kwargs={"uid_base": UID_BASE + 70})
    try:
        yield backend
    finally:
        backend.close()
        ray.shutdown()
    end = time.monotonic() + 10
    while processes_of_uids(UIDS) and time.monotonic() < end:
        time.sleep(0.1)
    assert processes_of_uids(UIDS) == [], "the actors' sandboxes are gone after close()"


def judge_add(backend: Any, source: str) -> bool:
    """A judge running next to the sandbox (on the actor): HumanEval-style check."""
    with backend.session(SandboxJob(source=source, limits=Limits(call_timeout=2))) as s:
        add = s.function("add")
        try:
            return bool(add(1, 2) == 3 and add(-1, 1) == 0)
        except Exception:
            return False


def test_run_many_through_ray(pool: Any) -> None:
    jobs = [SandboxJob(source=f"print({i} + 1)") for i in range(24)]
    results = pool.run_many(jobs)
    assert [r.stdout for r in results] == [f"{i + 1}\n" for i in range(24)]
    assert {r.worker for r in results} == {0, 1} and all(r.backend == "local" for r in results)
    r = pool.run(SandboxJob(source="def f(): return {1: (2,)}", calls=[Call(name="f")]))
    assert r.calls and r.calls[0].value == {1: (2,)}
    assert (
        asyncio.run(
            pool.arun(SandboxJob(source="while True: pass", limits=Limits(wall_time=1)))
        ).status
        == Status.TIMEOUT
    )


def test_judge_functions_run_on_actors(pool: Any) -> None:
    good = "def add(a, b):\n    return a + b\n"
    bad = "class Y:\n    def __eq__(s, o): return True\ndef add(a, b):\n    return Y()\n"
    assert pool.map(judge_add, [good, bad, good]) == [True, False, True]
    assert ray.get(pool.submit(judge_add, good)) is True
