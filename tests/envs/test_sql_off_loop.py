"""Judging a SQL answer holds no event loop: a hostile query may run up to its limits
(``SqlLimits``: VM steps and wall time), and a served session shares its loop with every
other session. The query must run while the loop goes on."""

from __future__ import annotations

import asyncio
import threading

import pytest

from gymforge.core import Reply
from gymforge.envs import sql as sql_pkg
from gymforge.envs.sql import SqlEnv
from gymforge.envs.sql.redteam import fenced


def test_slow_query_runs_while_the_loop_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The verifier, once started, waits until a coroutine on the episode's loop has run. Run
    on the loop itself, it waits out its whole timeout and the verdict is a verifier error."""
    started, loop_ran = threading.Event(), threading.Event()
    real = sql_pkg.env.VERIFIER

    class WaitsForTheLoop:
        def verify(self, *args: object, **kwargs: object) -> object:
            started.set()
            assert loop_ran.wait(timeout=10.0), "the event loop did not run while the query did"
            return real.verify(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sql_pkg.env, "VERIFIER", WaitsForTheLoop())

    async def episode() -> str:
        env = SqlEnv()
        try:
            task_id = SqlEnv.tasks.sample(1, seed=3)[0]
            await env.reset(task_id, 0)

            async def heartbeat() -> None:
                while not started.is_set():  # the verifier has begun
                    await asyncio.sleep(0.001)
                loop_ran.set()  # and this coroutine ran meanwhile

            beat = asyncio.create_task(heartbeat())
            result = await env.step(Reply(text=fenced("SELECT 1")))
            await beat
            return str(result.info["verdict"]["reason"])
        finally:
            await env.close()

    reason = asyncio.run(episode())
    assert reason != "verifier_error", reason
