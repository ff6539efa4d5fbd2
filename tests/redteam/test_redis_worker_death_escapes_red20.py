"""Red team (every episode counted, the Redis backend): a policy takes its failing episodes
out of the count by making the worker that plays them die.

A task whose workers die each time they take it is given up after ``--max-reclaims``
takeovers (``Abandoned``): an infrastructure error, never written, never scored. The
planted ``ExitEnv`` (``planted_worker_exit``) judges a one-word reply and ends the process on
a marker in it (the stand-in for any environment bug an action reaches that ends the worker:
``sys.exit`` in library code, an abort, exhausted memory). A policy that answers the tasks it
knows and sends the marker on the rest kills three workers per failing task; each of those
tasks was abandoned, so only its successes were written.

Workers here are ``redis_worker.worker`` loops, each on its own thread and event loop,
restarted as they die, as a supervisor restarts worker processes; the planted bug's death
(``planted_worker_exit.die``) stops the calling worker's loop where it is, as a process
that ends runs nothing more: the task left unacked, nothing of the worker's cleanup run.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

redis = pytest.importorskip("redis")

import planted_worker_exit  # noqa: E402
from planted_worker_exit import ExitEnv  # noqa: E402

from gymforge.rollout.executors.redis import RedisExecutor  # noqa: E402
from gymforge.rollout.executors.redis_worker import worker  # noqa: E402
from gymforge.rollout.jobs import expand  # noqa: E402
from gymforge.rollout.runner import RunResult, run  # noqa: E402
from gymforge.rollout.spec import RunSpec  # noqa: E402
from tests.rollout.redis_helpers import REDIS_SERVER, redis_server  # noqa: E402

pytestmark = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")

ENV = "planted_worker_exit:ExitEnv"
EXITER = "planted_worker_exit:half_exiter"
HONEST = "planted_worker_exit:half_honest"
SLOTS = 3
MAX_STARTS = 600
"""Worker threads a run may start in all (three deaths per failing task, and the living)."""


GRAVES: list[object] = []
"""Dead workers' loops and tasks, kept (collected, a coroutine never resumed runs its
cleanup, which a dead process never does, and warns), their sockets
and selector closed once dead (``_bury``): a process that dies leaves no descriptor open,
and 150 dead workers' left open took the test process past 1,024 descriptors, so later
tests' ``select()`` failed."""


def _bury(loop: asyncio.AbstractEventLoop) -> None:
    """Close what a dead worker's loop holds open (its Redis connections' sockets, the
    selector and its wake-up pipe), running none of the worker's own code."""
    transports = getattr(loop, "_transports", {})  # every socket transport of the loop
    for transport in list(transports.values()):
        sock = getattr(transport, "_sock", None)
        if sock is not None:
            sock.close()
    loop.close()


class _Died(BaseException):
    """The planted bug's death, out of the step: no ``except Exception`` catches it."""


def _die(reply: str) -> None:
    asyncio.get_running_loop().stop()  # the loop runs nothing past this step's suspension
    raise _Died(reply)


def _serve(url: str, name: str, stop: threading.Event, died: list[str], max_reclaims: int) -> None:
    loop = asyncio.new_event_loop()
    run = worker(
        url,
        consumer=name,
        block_ms=50,
        reclaim_idle_ms=200,
        stop_event=stop,  # type: ignore[arg-type]
        max_reclaims=max_reclaims,
    )
    try:
        loop.run_until_complete(run)
    except RuntimeError:  # stopped by _die: the worker is gone, its loop left as it was
        died.append(name)
        GRAVES.append((loop, asyncio.all_tasks(loop)))
        _bury(loop)
        return
    loop.close()


def play(
    url: str,
    policy: str,
    n: int,
    out: Path,
    reclaims: Callable[[int], int] = lambda started: 2,
) -> tuple[RunResult, int]:
    """Run ``n`` tasks (half of each family) under ``policy`` on ``SLOTS`` worker threads,
    each restarted when it dies; the run's result and how many workers died. Worker number
    ``k`` (counting every start) runs with ``--max-reclaims`` ``reclaims(k)``."""
    jobs = expand([(t, 0) for t in ExitEnv.tasks.sample(n, 0)], group=1)
    spec = RunSpec(
        env=ENV,
        policy=policy,
        backend="redis",
        jobs=jobs,
        out=out,
        concurrency=SLOTS,
        stop_after_failed_tasks=None,  # a run that goes on past tasks given up (the API's)
    )
    stop = threading.Event()
    died: list[str] = []
    threads: list[threading.Thread] = []

    def start() -> None:
        k = len(threads)
        args = (url, f"w{k}", stop, died, reclaims(k))
        t = threading.Thread(target=_serve, args=args, daemon=True)
        threads.append(t)
        t.start()

    async def main() -> RunResult:
        executor = RedisExecutor(url, block_ms=50, timeout_s=600, idle_timeout_s=60)
        coordinator = asyncio.create_task(run(spec, executor))
        for _ in range(SLOTS):
            start()
        try:
            while not coordinator.done() and len(threads) < MAX_STARTS:
                alive = sum(t.is_alive() for t in threads)
                for _ in range(SLOTS - alive):
                    start()
                await asyncio.sleep(0.05)
            return await coordinator
        finally:
            stop.set()
            for t in threads:
                t.join(10)

    return asyncio.run(main()), len(died)


def counted(result: RunResult) -> dict[str, Any]:
    episodes = result.episodes
    rewards = [e["reward"] for e in episodes]
    return {
        "written": len(episodes),
        "mean_reward": round(sum(rewards) / len(rewards), 3) if rewards else None,
        "success": round(sum(bool(e["success"]) for e in episodes) / len(episodes), 3),
        "unwritten": result.summary["infra_errors"],
        "reasons": sorted({str(e.get("failure_reason")) for e in episodes if not e["success"]}),
    }


def test_worker_death_on_the_failing_tasks_is_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over 100 tasks (half of them ones the policy cannot solve), the worker-killing
    policy and the plain failer are counted alike: every episode written, the same success
    rate, each failure counted (``worker_died_on_action``) with the reward of its steps
    before the one its worker died in. Before, over 100 tasks: the killer's 50 failures
    were abandoned (150 workers dead) and its 50 successes alone written, success 1.0 and
    mean reward 0.99, against the plain failer's 100 written, 0.5 and 0.49; counted with no
    step, each failure earned 0 where the plain failer's earned -0.12 (its invalid call and
    its wrong answer): mean 0.495 against 0.435. Now 0.44 against 0.435: the step its
    worker died in is not paid (its step cost, -0.01)."""
    n = 100
    monkeypatch.setattr(planted_worker_exit, "die", _die)
    with redis_server(tmp_path) as url:
        honest, honest_deaths = play(url, HONEST, n, tmp_path / "honest")
    with redis_server(tmp_path) as url:
        trap, trap_deaths = play(url, EXITER, n, tmp_path / "trap")
    plain, killer = counted(honest), counted(trap)
    assert honest_deaths == 0 and plain["written"] == n and plain["success"] == 0.5, plain
    assert trap_deaths > 0, "the marker never ended a worker"
    assert killer["unwritten"] == 0, (killer, trap_deaths)
    assert killer["written"] == n, killer
    assert killer["success"] == plain["success"], (killer, plain)
    assert killer["reasons"] == ["worker_died_on_action"], killer
    # each such failure keeps the steps before the one its worker died in (the invalid
    # call: -0.11), not that step (the plain failer's wrong answer costs -0.01 more)
    failed = [e for e in trap.episodes if not e["success"]]
    assert {(e["steps"], round(e["reward"], 6), e["truncated"]) for e in failed} == {
        (1, -0.11, True)
    }
    assert killer["mean_reward"] <= plain["mean_reward"] + 0.005, (killer, plain)
