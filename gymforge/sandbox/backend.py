"""The one interface every execution backend implements.

``run(job) -> Result`` is the primitive; ``run_many`` (ordered batch) and ``arun``/``arun_many``
(asyncio) are built on it by ``BaseBackend`` with a private thread pool sized to the backend's
capacity, so they never starve the event loop's default executor.

The factory that picks a backend is ``gymforge.sandbox.factory.get_backend`` (re-exported as
``gymforge.sandbox.get_backend``): it sits above every backend, so no backend imports it back.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import threading
import weakref
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, Self, runtime_checkable

from gymforge.core.errors import GymforgeError
from gymforge.sandbox.models import Result, SandboxJob


class IsolationUnavailableError(GymforgeError):
    """bubblewrap isolation does not work here and unsafe execution was not requested."""


@runtime_checkable
class Backend(Protocol):
    name: str
    capacity: int

    def run(self, job: SandboxJob) -> Result: ...

    def run_many(self, jobs: Iterable[SandboxJob]) -> list[Result]: ...

    async def arun(self, job: SandboxJob) -> Result: ...

    def close(self) -> None: ...


_LIVE: weakref.WeakSet[BaseBackend] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:  # pragma: no cover - exercised in a subprocess test
    for backend in list(_LIVE):
        if backend.owner_pid == os.getpid():  # not in a fork()ed child: the parent owns them
            with contextlib.suppress(Exception):
                backend.close()


class BaseBackend:
    """Batch and async forms on top of ``run``; context manager; closed at interpreter exit."""

    name = "base"
    capacity = 1

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self.closed = False
        self.owner_pid = os.getpid()
        _LIVE.add(self)

    def run(self, job: SandboxJob) -> Result:
        raise NotImplementedError

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=max(1, self.capacity), thread_name_prefix=f"gymforge-{self.name}"
                )
            return self._pool

    def run_many(self, jobs: Iterable[SandboxJob]) -> list[Result]:
        """Run every job, ``capacity`` at a time; results in the order of ``jobs``."""
        jobs = list(jobs)
        if len(jobs) <= 1:
            return [self.run(j) for j in jobs]
        return list(self._executor().map(self.run, jobs))

    async def arun(self, job: SandboxJob) -> Result:
        return await asyncio.get_running_loop().run_in_executor(self._executor(), self.run, job)

    async def arun_many(self, jobs: Iterable[SandboxJob]) -> list[Result]:
        return list(await asyncio.gather(*(self.arun(j) for j in jobs)))

    def close(self) -> None:
        self.closed = True
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
