"""``RayExecutor``: episodes on async Ray actors, possibly on many nodes.

Each ``EpisodeActor`` is an async actor (``max_concurrency`` calls at once on its event
loop) holding a small pool of environments built from the environment's factory; ``play``
runs one attempt of a job with a fresh policy and returns its records or its error. The
executor sends each attempt to the least-loaded actor and awaits it; the runner does the
retrying. When an actor dies (its process, or its whole node: ``RayActorError``), the
attempts in flight on it fail with a retryable ``InfraError`` and a replacement actor is
started in its slot (an actor that is only unreachable, ``ActorUnavailableError``, is
replaced too: actors are never restarted by Ray, and its node may be gone); at most
``max_actor_restarts`` (default ``2 * actors + 2``) are started in a run, after which
``ExecutorDown`` ends it. An attempt's result is awaited once, so a
retried job can never be delivered twice.

Actors never write and never hold the seal key: records come back to the runner.

Ray is initialised by the caller, or by ``open``: ``address=None`` starts a local Ray
(``num_cpus`` = ``actors``, no dashboard), ``address="ray://..."``/``"auto"`` joins a cluster
(gymforge must be importable on its nodes, e.g. via ``runtime_env``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

from gymforge.core.env import Environment
from gymforge.core.errors import ConfigError, InfraError, UserError
from gymforge.core.policy import Policy
from gymforge.rollout.executors.base import ExecutorDown, Records, Refused, play_attempt
from gymforge.rollout.failures import worker_report
from gymforge.rollout.jobs import Job
from gymforge.rollout.spec import RunSpec
from gymforge.settings import Settings, library_default
from gymforge.verify.services import RunServices, current

log = logging.getLogger("gymforge.runner.ray")

EnvRef = str | Callable[[], Environment]
PolicyRef = str | Callable[[], Policy]


def _env_factory(
    env_ref: EnvRef, dataset: str | None, services: RunServices
) -> Callable[[], Environment]:
    if callable(env_ref):
        return env_ref
    from gymforge.registry.handle import open_env

    with services.activate():  # the preflight checks the run's sandbox
        handle = open_env(
            env_ref, Path(dataset) if dataset else None, token=services.settings.token
        )
    return handle.factory


def _policy_factory(
    policy_ref: PolicyRef, options: dict[str, Any], env_factory: Callable[[], Environment]
) -> tuple[Callable[[], Policy], Any]:
    """The policy of ``policy_ref``; a workspace harness gets the shell tool of the actor's
    own environment (``env_factory``)."""
    if callable(policy_ref):
        return policy_ref, None
    from gymforge.rollout.resolve import resolve_policy, with_harness_shell

    opts = with_harness_shell(dict(options), env_factory)
    source = resolve_policy(policy_ref, opts.pop("base_url", None), **opts)
    return source.factory, source.close


class EpisodeActor:
    """The body of the Ray actor: an environment pool, a policy factory and ``play``.

    ``env_ref`` and ``policy_ref`` are resolved on the actor: names (``"ledger"``,
    ``"oracle"``, ``"openai:MODEL"``) or zero-argument factories (pickled to the actor).
    ``settings`` are the driver's run settings (pickled to the actor: the actor's process
    reads no configuration of its own); the actor owns the ``RunServices`` they make and
    closes them with itself."""

    def __init__(
        self,
        env_ref: EnvRef,
        policy_ref: PolicyRef,
        *,
        run_id: str,
        episode_timeout_s: float | None = None,
        dataset: str | None = None,
        policy_options: dict[str, Any] | None = None,
        settings: Settings | None = None,
    ) -> None:
        self.services = RunServices(settings if settings is not None else Settings())
        # an async actor's __init__ runs on its event loop, and open_env uses asyncio.run:
        # resolve both in a thread
        with ThreadPoolExecutor(1) as pool:
            self.env_factory = pool.submit(_env_factory, env_ref, dataset, self.services).result()
            self.policy_factory, self._policy_close = pool.submit(
                _policy_factory, policy_ref, policy_options or {}, self._new_env
            ).result()
        self.run_id = run_id
        self.episode_timeout_s = episode_timeout_s
        self._idle: list[Environment] = []
        self.played = 0

    def _new_env(self) -> Environment:
        with self.services.activate():
            return self.env_factory()

    async def ready(self) -> dict[str, Any]:
        """Where the actor runs and how many episodes it finished (also: wait until it
        has started)."""
        return {"pid": os.getpid(), "node": _node_id(), "played": self.played}

    async def play(self, job: dict[str, Any]) -> dict[str, Any]:
        """One attempt at a job (``dataclasses.asdict(Job)``): ``{"records": [...]}``, or
        ``{"error": str, "retryable": bool}`` after an infrastructure failure."""
        j = Job(**job)
        with self.services.activate():
            env = self._idle.pop() if self._idle else self.env_factory()
        try:
            policy = self.policy_factory()
            keys = j.keys(self.run_id, env, policy)
            with self.services.activate():
                records = await play_attempt(env, policy, keys, self.episode_timeout_s)
        except (InfraError, UserError) as err:  # retried, or a mistake that stops the run
            with contextlib.suppress(Exception):
                await env.close()  # a failed episode may leave the env mid-step
            message, again = worker_report(err)
            return {"error": message, "retryable": again}
        self._idle.append(env)
        self.played += 1
        return {"records": records}

    async def close(self) -> None:
        for env in self._idle:
            with contextlib.suppress(Exception):
                await env.close()
        self._idle.clear()
        if self._policy_close is not None:
            with contextlib.suppress(Exception):
                await self._policy_close()
        self.services.close()


def _node_id() -> str | None:
    try:
        import ray

        return str(ray.get_runtime_context().get_node_id())
    except Exception:
        return None


def ensure_ray(
    address: str | None = None, *, local_cpus: int | None = None, **init_kwargs: Any
) -> bool:
    """Initialise Ray unless it already is; True if this call started it. Token auth (on by
    default in Ray 2.60) is turned off for a local Ray unless the environment says otherwise."""
    try:
        import ray
    except ImportError:
        raise ConfigError("the ray backend needs `pip install gymforge[ray]`") from None
    if ray.is_initialized():
        return False
    library_default("RAY_AUTH_MODE", "disabled")
    if address is None:
        init_kwargs.setdefault("num_cpus", local_cpus or os.cpu_count() or 1)
        init_kwargs.setdefault("include_dashboard", False)
    init_kwargs.setdefault("log_to_driver", False)
    ray.init(address=address, **init_kwargs)
    return True


class RayExecutor:
    """Play jobs on ``actors`` Ray actors, ``max_concurrency`` episodes at once on each
    (default: the spec's ``concurrency``).

    ``env`` / ``policy`` default to the spec's names, resolved on each actor (with
    ``policy_options``, ``base_url`` among them); zero-argument factories are pickled to
    the actors instead. ``actor_options`` apply to every actor (default ``num_cpus=1``);
    ``slot_options[i]`` further to the first actor of slot ``i`` only (pin it to a node's
    resources, say): a replacement gets ``actor_options`` alone, so it can start wherever
    there is room. ``shutdown`` (default: only if ``open`` started Ray) shuts Ray down at
    the end. ``on_actors`` is called with the live actor handles whenever they change."""

    name = "ray"

    def __init__(
        self,
        *,
        env: EnvRef | None = None,
        policy: PolicyRef | None = None,
        policy_options: dict[str, Any] | None = None,
        actors: int = 2,
        max_concurrency: int | None = None,
        address: str | None = None,
        actor_options: dict[str, Any] | None = None,
        slot_options: Sequence[dict[str, Any]] = (),
        init_kwargs: dict[str, Any] | None = None,
        max_actor_restarts: int | None = None,
        shutdown: bool | None = None,
        on_actors: Callable[[list[Any]], None] | None = None,
    ) -> None:
        if actors < 1 or (max_concurrency is not None and max_concurrency < 1):
            raise ConfigError("the Ray executor needs at least one actor and max_concurrency >= 1")
        self.env, self.policy, self.policy_options = env, policy, dict(policy_options or {})
        self.actors, self.max_concurrency = actors, max_concurrency
        self.address, self.init_kwargs = address, dict(init_kwargs or {})
        self.actor_options, self.slot_options = dict(actor_options or {}), list(slot_options)
        self.restart_budget = 2 * actors + 2 if max_actor_restarts is None else max_actor_restarts
        self.shutdown, self.on_actors = shutdown, on_actors
        self.slots: list[Any] = []
        self.load: list[int] = []
        self.restarts = 0
        self._new: Callable[[int | None], Any] | None = None

    def capacity(self, spec: RunSpec, jobs: int) -> int:
        return self.actors * (self.max_concurrency or spec.concurrency)

    async def open(self, spec: RunSpec, run_id: str) -> None:
        import ray

        started = ensure_ray(self.address, local_cpus=self.actors, **self.init_kwargs)
        self.shutdown = started if self.shutdown is None else self.shutdown
        opts: dict[str, Any] = {"num_cpus": 1}
        opts.update(self.actor_options)
        opts["max_concurrency"] = self.max_concurrency or spec.concurrency
        actor_cls = ray.remote(EpisodeActor)
        env_ref = self.env if self.env is not None else spec.env
        policy_ref = self.policy if self.policy is not None else spec.policy
        ctor = {
            "run_id": run_id,
            "episode_timeout_s": spec.episode_timeout,
            "dataset": spec.dataset,
            "policy_options": self.policy_options,
            "settings": current().settings,  # the run's, not the actors' environment's
        }

        def new(slot: int | None) -> Any:
            extra = (
                self.slot_options[slot]
                if slot is not None and slot < len(self.slot_options)
                else {}
            )
            return actor_cls.options(**{**opts, **extra}).remote(env_ref, policy_ref, **ctor)

        self._new = new
        self.slots = [new(i) for i in range(self.actors)]
        self.load = [0] * self.actors
        # fail fast on an actor that cannot start (a bad env or policy spec)
        await asyncio.gather(*(a.ready.remote() for a in self.slots))
        self._announce()

    def _announce(self) -> None:
        if self.on_actors is not None:
            self.on_actors(list(self.slots))

    def _replace(self, slot: int, dead: Any, why: str) -> None:
        import ray

        if self.slots[slot] is not dead or self._new is None:
            return  # already replaced after an earlier failure of the same actor
        with contextlib.suppress(Exception):
            ray.kill(dead, no_restart=True)
        if self.restarts >= self.restart_budget:
            raise ExecutorDown(
                f"Ray actors died {self.restarts + 1} times; giving up "
                f"(max_actor_restarts={self.restart_budget})"
            )
        self.restarts += 1
        self.slots[slot] = self._new(None)
        log.warning("ray actor %d died (%s); started a replacement", slot, why)
        self._announce()

    async def play(self, job: Job) -> Records:
        import ray
        from ray.exceptions import RayActorError

        slot = min(range(len(self.slots)), key=self.load.__getitem__)
        actor = self.slots[slot]
        self.load[slot] += 1
        ref = actor.play.remote(asdict(job))
        try:
            out: dict[str, Any] = await ref
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                ray.cancel(ref)
            raise
        except RayActorError as err:  # dead, or unreachable (its node is gone): replace it
            self._replace(slot, actor, type(err).__name__)
            raise InfraError(f"its Ray actor failed: {type(err).__name__}") from err
        finally:
            self.load[slot] -= 1
        if "error" in out:
            raise InfraError(out["error"]) if out["retryable"] else Refused(out["error"])
        records: Records = out["records"]
        return records

    async def close(self) -> None:
        import ray

        for a in self.slots:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(a.close.remote(), 10)
            with contextlib.suppress(Exception):
                ray.kill(a, no_restart=True)
        self.slots = []
        if self.shutdown and ray.is_initialized():
            ray.shutdown()

    def stats(self) -> dict[str, Any]:
        return {"actors": self.actors, "actor_restarts": self.restarts}
