"""The one interface every execution backend implements, and the factory that picks one.

``run(job) -> Result`` is the primitive; ``run_many`` (ordered batch) and ``arun``/``arun_many``
(asyncio) are built on it by ``BaseBackend`` with a private thread pool sized to the backend's
capacity, so they never starve the event loop's default executor.

``get_backend`` refuses to hand out a backend without isolation unless the caller passes
``unsafe_no_isolation=True``; then it returns an ``UnsafeBackend`` and prints a loud warning.
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
from typing import Any, Protocol, Self, runtime_checkable

from gymforge.core.errors import ConfigError, GymforgeError
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


def get_backend(
    kind: str = "local", *, unsafe_no_isolation: bool = False, **kwargs: Any
) -> BaseBackend:
    """A ready backend. ``kind``: ``local`` (bubblewrap + zygotes), ``docker`` (zygotes in
    long-lived containers of podman or another Docker-compatible engine),
    ``ray`` (a pool of local backends on Ray actors) or ``unsafe``.

    ``local`` raises ``IsolationUnavailableError`` when bubblewrap cannot run here, unless
    ``unsafe_no_isolation=True``, which falls back to ``UnsafeBackend`` with a loud warning.
    """
    if kind == "local":
        from gymforge.sandbox.doctor import bwrap_works

        ok, why = bwrap_works()
        if ok:
            from gymforge.sandbox.local import LocalBackend

            return LocalBackend(**kwargs)
        if not unsafe_no_isolation:
            raise IsolationUnavailableError(
                f"sandbox isolation is unavailable here ({why}); run `gymforge sandbox doctor`, "
                "or pass --unsafe-no-isolation to run untrusted code WITHOUT isolation"
            )
        kind = "unsafe"
    if kind == "unsafe":
        if not unsafe_no_isolation:
            raise IsolationUnavailableError(
                "the unsafe backend runs untrusted code without isolation; "
                "pass unsafe_no_isolation=True (--unsafe-no-isolation) to accept that"
            )
        from gymforge.sandbox.local import UnsafeBackend

        return UnsafeBackend(**kwargs)
    if kind == "docker":
        from gymforge.sandbox.docker import DockerBackend

        return DockerBackend(**kwargs)
    if kind == "ray":
        from gymforge.sandbox.ray_pool import RayBackend

        return RayBackend(**kwargs)
    raise ConfigError(f"unknown sandbox backend {kind!r}; use local, docker, ray or unsafe")
