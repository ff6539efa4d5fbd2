"""Ray pool backend: jobs spread over Ray actors, each running its own ``LocalBackend``.

Each ``SandboxActor`` is a threaded actor (``max_concurrency`` = its worker count) that owns a
local zygote pool on whatever node Ray placed it. ``run_many`` keeps a bounded number of jobs in
flight per actor and consumes them with ``ray.wait`` as they finish (not ``ActorPool``, which
allows one call per actor at a time). An actor that dies turns its in-flight jobs into
``internal_error`` results; it is not restarted (``max_restarts`` may be set in
``actor_options``).

Interactive sessions do not cross Ray; run judge code next to the sandbox instead:
``submit(fn, *args)`` calls ``fn(local_backend, *args)`` on an actor and returns an
``ObjectRef``, and ``map(fn, items)`` does so for many items with the same flow control.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from gymforge.core.errors import ConfigError
from gymforge.sandbox.backend import BaseBackend
from gymforge.sandbox.host import host_backend
from gymforge.sandbox.models import Result, SandboxJob, Status


class SandboxActor:
    """The body of a Ray actor: a local sandbox backend and methods to use it."""

    def __init__(self, workers: int, backend_kwargs: dict[str, Any]) -> None:
        kwargs = dict(backend_kwargs)
        kind = kwargs.pop("kind", "local")
        self.backend: Any = host_backend(kind, workers=workers, **kwargs)

    def info(self) -> list[dict[str, Any]]:
        return list(self.backend.worker_info())

    def run(self, job: SandboxJob) -> Result:
        return self.backend.run(job)  # type: ignore[no-any-return]

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        return fn(self.backend, *args)

    def close(self) -> None:
        self.backend.close()


class RayBackend(BaseBackend):
    """``actors`` Ray actors x ``workers_per_actor`` zygote workers each.

    ``backend_kwargs`` go to ``host_backend`` on each actor (e.g. ``{"unsafe_no_isolation":
    True}`` or ``{"seccomp": False}``); ``actor_options`` to ``ray.remote(...).options``
    (``num_cpus`` defaults to ``workers_per_actor``). Ray must be initialised by the caller,
    or ``init_kwargs`` are passed to ``ray.init``.
    """

    name = "ray"

    def __init__(
        self,
        actors: int = 1,
        workers_per_actor: int = 2,
        *,
        backend_kwargs: dict[str, Any] | None = None,
        actor_options: dict[str, Any] | None = None,
        max_in_flight_per_actor: int | None = None,
        init_kwargs: dict[str, Any] | None = None,
    ) -> None:
        try:
            import ray
        except ImportError:
            raise ConfigError("the ray backend needs `pip install gymforge[ray]`") from None
        if actors < 1 or workers_per_actor < 1:
            raise ConfigError("RayBackend needs at least one actor and one worker per actor")
        super().__init__()
        self._ray = ray
        if not ray.is_initialized():
            ray.init(**(init_kwargs or {}))
        opts = {"num_cpus": workers_per_actor, "max_concurrency": workers_per_actor}
        opts.update(actor_options or {})
        cls = ray.remote(SandboxActor).options(**opts)
        self.actors: list[Any] = [
            cls.remote(workers_per_actor, backend_kwargs or {}) for _ in range(actors)
        ]
        self.capacity = actors * workers_per_actor
        self.in_flight = max_in_flight_per_actor or 2 * workers_per_actor
        try:
            self.infos = ray.get([a.info.remote() for a in self.actors])
        except Exception:
            self.close()
            raise

    def run(self, job: SandboxJob) -> Result:
        return self.run_many([job])[0]

    def run_many(self, jobs: Iterable[SandboxJob]) -> list[Result]:
        """Every job, in order, with at most ``max_in_flight_per_actor`` per actor at once."""

        def fail(_item: Any, err: Exception) -> Result:
            return Result(
                status=Status.INTERNAL_ERROR,
                backend=self.name,
                error=f"ray actor failed: {type(err).__name__}: {err}",
            )

        return self._flow(list(jobs), lambda a, job: a.run.remote(job), fail)

    def map(self, fn: Callable[..., Any], items: Iterable[Any]) -> list[Any]:
        """``[fn(local_backend, item) for item in items]``, computed on the actors. A failed
        actor call gives the exception object in that item's place."""
        return self._flow(
            list(items), lambda a, item: a.call.remote(fn, item), lambda _item, err: err
        )

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(local_backend, *args)`` on the next actor; returns a Ray ``ObjectRef``."""
        actor = self.actors[next(self._rr)]
        return actor.call.remote(fn, *args)

    @property
    def _rr(self) -> Iterator[int]:
        if not hasattr(self, "_rr_iter"):
            self._rr_iter = itertools.cycle(range(len(self.actors)))
        return self._rr_iter

    def _flow(
        self,
        items: list[Any],
        launch: Callable[[Any, Any], Any],
        on_error: Callable[[Any, Exception], Any],
    ) -> list[Any]:
        ray = self._ray
        results: list[Any] = [None] * len(items)
        pending: dict[Any, tuple[int, int]] = {}  # ref -> (item index, actor index)
        load = [0] * len(self.actors)
        nxt = 0
        while nxt < len(items) or pending:
            while nxt < len(items):
                actor = min(range(len(self.actors)), key=load.__getitem__)
                if load[actor] >= self.in_flight:
                    break
                pending[launch(self.actors[actor], items[nxt])] = (nxt, actor)
                load[actor] += 1
                nxt += 1
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                i, actor = pending.pop(ref)
                load[actor] -= 1
                try:
                    results[i] = ray.get(ref)
                except Exception as e:  # RayActorError, RayTaskError, ...
                    results[i] = on_error(items[i], e)
        return results

    async def arun(self, job: SandboxJob) -> Result:
        actor = self.actors[next(self._rr)]
        try:
            return await actor.run.remote(job)  # type: ignore[no-any-return]
        except Exception as e:
            return Result(
                status=Status.INTERNAL_ERROR,
                backend=self.name,
                error=f"ray actor failed: {type(e).__name__}: {e}",
            )

    def close(self) -> None:
        if self.closed:
            return
        super().close()
        ray = self._ray
        for a in getattr(self, "actors", []):
            with contextlib.suppress(Exception):
                ray.get(a.close.remote(), timeout=30)
            with contextlib.suppress(Exception):
                ray.kill(a)
        self.actors = []
