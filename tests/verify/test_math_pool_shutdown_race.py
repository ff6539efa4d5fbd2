"""A job submitted while the math verifier pool shuts down is answered: run, or failed with
``InfraError``, never left waiting. ``submit`` checked that the pool was open and queued the
job after, outside the lock ``shutdown`` marks it closed under: a shutdown that ran in between (a
run's services closed while an episode was still verifying) had already failed what was
queued, so the job came after the last look and its future never resolved (``run`` waited
forever). Here the shutdown is run to its end between the check and the queueing."""

from __future__ import annotations

import threading
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import pytest

from gymforge.core.errors import InfraError
from gymforge.verify.math import MathPool


class _ShutdownFirst:
    """The pool's job queue, except that the first job put starts ``shutdown`` on another
    thread and, unless the putter holds the pool's submit lock (then the shutdown waits for the
    job), lets it finish before the job goes in."""

    def __init__(self, pool: MathPool) -> None:
        self.pool, self.queue, self.armed = pool, pool._jobs, True

    def put(self, job: Any) -> None:
        if job is not None and self.armed:
            self.armed = False
            held = self.pool._submit_lock.locked()  # by this submit: the shutdown cannot pass it
            closer = threading.Thread(target=self.pool.shutdown)
            closer.start()
            if not held:
                closer.join(30)  # bounded
        self.queue.put(job)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.queue, name)


def test_a_job_submitted_during_shutdown_is_answered() -> None:
    pool = MathPool(workers=1).start()
    try:
        pool._jobs = _ShutdownFirst(pool)  # type: ignore[assignment]
        try:
            future = pool.submit({"op": "ping"})
        except InfraError:
            return  # refused at once: answered too
        try:
            result = future.result(timeout=30)
        except InfraError:
            return  # failed by the shutdown: answered
        except FutureTimeout:
            pytest.fail("the job was never answered: queued after the shutdown's last look")
        assert result.status in ("ok", "crash")  # run, or cut short as the workers stopped
    finally:
        pool.shutdown()
