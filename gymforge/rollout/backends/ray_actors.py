"""The Ray backend for rollouts: episodes spread over async Ray actors.

Each ``EpisodeActor`` is an async actor (``max_concurrency`` calls at once on its event loop)
holding a small pool of environments built from the environment's factory. ``play(job)``
takes an environment from the pool, plays one episode with a fresh policy, and returns its
records; infrastructure failures (``InfraError``) are retried on a fresh environment inside
the actor, exactly as the local runner does.

``run_ray`` is the driver. It keeps ``in_flight_per_actor`` calls in flight on every actor and
consumes them with ``ray.wait`` as they finish (not ``ActorPool``, which allows one call per
actor at a time), and writes each finished episode once, keyed by ``(task_id, seed,
rollout)``, with the same ``TrajectoryWriter`` (one fsync per episode) and episode ids
(``{run_id}-{index:06d}``) as the local runner. When an actor dies (``RayActorError``), a
replacement actor is started in its slot and the jobs that were in flight on it go back to
the front of the queue; a result that arrives for an episode already written is dropped, so
the file holds every job exactly once.

The driver is the only writer, so it alone seals (``seal_key``, as in the local runner);
actors never hold the seal key.

Ray is initialised by the caller, or by ``run_ray``: ``address=None`` starts a local Ray
(``num_cpus`` = ``local_cpus``, no dashboard), ``address="ray://..."``/``"auto"`` joins a
cluster (gymforge must be importable on its nodes, e.g. via ``runtime_env``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

from gymforge.core.env import Environment
from gymforge.core.errors import ConfigError, InfraError, UserError
from gymforge.core.policy import Policy
from gymforge.rollout.runner import Job, RunResult, expand, prepare_output
from gymforge.rollout.summary import summarize

log = logging.getLogger("gymforge.runner.ray")

EnvRef = str | Callable[[], Environment]
PolicyRef = str | Callable[[], Policy]


def _env_factory(env_ref: EnvRef, dataset: str | None) -> Callable[[], Environment]:
    if callable(env_ref):
        return env_ref
    from gymforge.registry.handle import open_env

    return open_env(env_ref, Path(dataset) if dataset else None).factory


def _policy_factory(
    policy_ref: PolicyRef, base_url: str | None, options: dict[str, Any]
) -> tuple[Callable[[], Policy], Any]:
    if callable(policy_ref):
        return policy_ref, None
    from gymforge.rollout.resolve import resolve_policy

    source = resolve_policy(policy_ref, base_url=base_url, **options)
    return source.factory, source.close


class EpisodeActor:
    """The body of the Ray actor: an environment pool, a policy factory and ``play``.

    ``env_ref`` and ``policy_ref`` are resolved on the actor: names (``"ledger"``,
    ``"oracle"``, ``"openai:MODEL"``) or zero-argument factories (pickled to the actor).
    """

    def __init__(
        self,
        env_ref: EnvRef,
        policy_ref: PolicyRef,
        *,
        run_id: str,
        pool_size: int = 16,
        max_retries: int = 2,
        episode_timeout_s: float | None = None,
        dataset: str | None = None,
        base_url: str | None = None,
        policy_options: dict[str, Any] | None = None,
    ) -> None:
        # an async actor's __init__ runs on its event loop, and open_env uses asyncio.run:
        # resolve both in a thread
        with ThreadPoolExecutor(1) as pool:
            self.env_factory = pool.submit(_env_factory, env_ref, dataset).result()
            self.policy_factory, self._policy_close = pool.submit(
                _policy_factory, policy_ref, base_url, policy_options or {}
            ).result()
        self.run_id = run_id
        self.pool_size = max(1, pool_size)
        self.max_retries = max_retries
        self.episode_timeout_s = episode_timeout_s
        self._idle: list[Environment] = []
        self._made = 0
        self._free: asyncio.Condition | None = None
        self.played = 0

    async def ready(self) -> dict[str, Any]:
        """Where the actor runs (also: wait until it has started)."""
        return {"pid": os.getpid(), "node": _node_id()}

    async def _acquire(self) -> Environment:
        if self._free is None:
            self._free = asyncio.Condition()
        async with self._free:
            while not self._idle and self._made >= self.pool_size:
                await self._free.wait()
            if self._idle:
                return self._idle.pop()
            self._made += 1
        return self.env_factory()

    async def _release(self, env: Environment | None) -> None:
        assert self._free is not None
        async with self._free:
            if env is None:
                self._made -= 1
            else:
                self._idle.append(env)
            self._free.notify()

    async def play(self, job: dict[str, Any]) -> dict[str, Any]:
        """Play one job (``dataclasses.asdict(Job)``). Returns ``{"key", "records", "error",
        "retries", "fatal"}``: ``records`` is empty when every attempt failed."""
        from gymforge.rollout.episode import run_episode

        j = Job(**job)
        out: dict[str, Any] = {"key": list(j.key), "records": [], "error": None, "retries": 0}
        out["fatal"] = False
        env: Environment | None = await self._acquire()
        try:
            for n in range(self.max_retries + 1):
                assert env is not None
                policy = self.policy_factory()
                keys = j.keys(self.run_id, env, policy)
                try:
                    episode = run_episode(env, policy, keys)
                    if self.episode_timeout_s is None:
                        out["records"] = await episode
                    else:
                        try:
                            out["records"] = await asyncio.wait_for(episode, self.episode_timeout_s)
                        except TimeoutError as err:
                            raise InfraError(
                                f"episode exceeded its {self.episode_timeout_s} s timeout"
                            ) from err
                    break
                except InfraError as err:
                    with contextlib.suppress(Exception):
                        await env.close()  # a failed episode may leave the env mid-step
                    env = None
                    env = self.env_factory()
                    if not err.retryable:
                        out.update(error=str(err), fatal=True)
                        break
                    if n == self.max_retries:
                        out["error"] = f"{j.task_id} seed {j.seed} rollout {j.rollout}: {err}"
                    else:
                        out["retries"] += 1
        finally:
            await self._release(env)
        self.played += 1
        return out

    async def close(self) -> None:
        for env in self._idle:
            with contextlib.suppress(Exception):
                await env.close()
        self._idle.clear()
        if self._policy_close is not None:
            with contextlib.suppress(Exception):
                await self._policy_close()


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
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    if address is None:
        init_kwargs.setdefault("num_cpus", local_cpus or os.cpu_count() or 1)
        init_kwargs.setdefault("include_dashboard", False)
    init_kwargs.setdefault("log_to_driver", False)
    ray.init(address=address, **init_kwargs)
    return True


async def run_ray(
    env_ref: EnvRef,
    policy_spec: PolicyRef,
    jobs: Sequence[tuple[str, int]] | Sequence[Job],
    out_dir: str | Path | None,
    *,
    run_id: str | None = None,
    actors: int = 2,
    max_concurrency: int = 16,
    in_flight_per_actor: int | None = None,
    pool_size: int | None = None,
    address: str | None = None,
    group: int = 1,
    max_retries: int = 2,
    episode_timeout_s: float | None = None,
    resume: bool = False,
    dataset: str | None = None,
    base_url: str | None = None,
    policy_options: dict[str, Any] | None = None,
    actor_options: dict[str, Any] | None = None,
    init_kwargs: dict[str, Any] | None = None,
    max_actor_restarts: int | None = None,
    shutdown: bool | None = None,
    on_episode: Callable[[dict[str, Any]], None] | None = None,
    on_actors: Callable[[list[Any]], None] | None = None,
    summary_extra: dict[str, Any] | None = None,
    seal_key: bytes | None = None,
) -> RunResult:
    """Run every job on ``actors`` Ray actors; the local runner's contract, on Ray.

    ``env_ref`` is an environment name (``open_env``) or a zero-argument factory;
    ``policy_spec`` a policy spec (``resolve_policy``) or a zero-argument factory. Each actor
    runs up to ``max_concurrency`` episodes at once on ``pool_size`` (default
    ``max_concurrency``) environments; the driver keeps ``in_flight_per_actor`` (default
    ``max_concurrency``) calls in flight per actor. A job whose actor died is retried on a
    replacement actor up to ``max_retries`` times; at most ``max_actor_restarts`` (default
    ``2 * actors + 2``) replacements are started in a run. ``shutdown`` (default: only if this
    call started Ray) shuts Ray down at the end. ``on_actors`` is called with the live actor
    handles whenever they change (tests use it to kill one).
    """
    import ray
    from ray.exceptions import ActorUnavailableError, RayActorError

    if actors < 1 or max_concurrency < 1:
        raise ConfigError("run_ray needs at least one actor and max_concurrency >= 1")
    all_jobs: list[Job] = list(jobs) if jobs and isinstance(jobs[0], Job) else expand(jobs, group)  # type: ignore[arg-type]
    run_id = run_id or uuid.uuid4().hex[:12]
    path = Path(out_dir) / "trajectories.jsonl" if out_dir else None
    output = prepare_output(path, resume, seal_key)
    previous, kept = output.previous, output.done
    all_jobs = [j for j in all_jobs if j.key not in kept]
    started = ensure_ray(address, local_cpus=actors, **(init_kwargs or {}))
    shutdown = started if shutdown is None else shutdown

    opts: dict[str, Any] = {"num_cpus": 1, "max_concurrency": max_concurrency}
    opts.update(actor_options or {})
    actor_cls = ray.remote(EpisodeActor).options(**opts)
    ctor_kwargs = dict(
        run_id=run_id,
        pool_size=pool_size or max_concurrency,
        max_retries=max_retries,
        episode_timeout_s=episode_timeout_s,
        dataset=dataset,
        base_url=base_url,
        policy_options=policy_options,
    )

    def new_actor() -> Any:
        return actor_cls.remote(env_ref, policy_spec, **ctor_kwargs)

    n_actors = min(actors, max(1, len(all_jobs)))
    slots: list[Any] = [new_actor() for _ in range(n_actors)]
    in_flight = in_flight_per_actor or max_concurrency
    restart_budget = 2 * actors + 2 if max_actor_restarts is None else max_actor_restarts
    try:  # fail fast on an actor that cannot start (a bad env or policy spec)
        await asyncio.to_thread(ray.get, [a.ready.remote() for a in slots])
    except Exception:
        for a in slots:
            with contextlib.suppress(Exception):
                ray.kill(a, no_restart=True)
        if shutdown:
            ray.shutdown()
        raise
    if on_actors is not None:
        on_actors(list(slots))

    writer = output.writer(summary_extra)
    queue: deque[Job] = deque(all_jobs)
    attempts: dict[tuple[str, int, int], int] = {}
    pending: dict[Any, tuple[Job, int, Any]] = {}  # ref -> (job, slot, actor handle)
    load = [0] * n_actors
    written: set[tuple[str, int, int]] = set()
    finished: list[tuple[int, dict[str, Any]]] = []
    errors: list[str] = []
    stats = {"infra_retries": 0, "actor_restarts": 0, "actor_retries": 0, "duplicates": 0}
    t0 = time.perf_counter()

    def replace(slot: int, dead: Any, why: str) -> None:
        if slots[slot] is not dead:
            return  # already replaced after an earlier failure of the same actor
        with contextlib.suppress(Exception):
            ray.kill(dead, no_restart=True)
        if stats["actor_restarts"] >= restart_budget:
            raise InfraError(
                f"Ray actors died {stats['actor_restarts'] + 1} times; giving up "
                f"(max_actor_restarts={restart_budget})"
            )
        stats["actor_restarts"] += 1
        slots[slot] = new_actor()
        log.warning("ray actor %d died (%s); started a replacement", slot, why)
        if on_actors is not None:
            on_actors(list(slots))

    def launch() -> None:
        while queue:
            slot = min(range(n_actors), key=load.__getitem__)
            if load[slot] >= in_flight:
                return
            job = queue.popleft()
            if job.key in written:
                continue
            actor = slots[slot]
            pending[actor.play.remote(asdict(job))] = (job, slot, actor)
            load[slot] += 1

    def wait_some(refs: list[Any]) -> list[Any]:
        ready: list[Any]
        ready, rest = ray.wait(refs, num_returns=1)
        if rest:  # take everything else that is already done, without waiting
            more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
            ready += more
        return ready

    def accept(job: Job, out: dict[str, Any]) -> None:
        stats["infra_retries"] += out["retries"]
        if out["fatal"]:  # a refused request: every episode would fail
            raise UserError(f"the policy's requests are refused: {out['error']}")
        if out["error"] or not out["records"]:
            errors.append(out["error"] or f"{job.task_id} seed {job.seed}: no records")
            written.add(job.key)  # settled: failed for good, never written
            return
        if job.key in written:
            stats["duplicates"] += 1
            return
        records = out["records"]
        if writer is not None:
            writer.write_episode(records)
        written.add(job.key)
        finished.append((job.index, records[-1]))
        if on_episode is not None:
            on_episode(records[-1])

    try:
        launch()
        while pending:
            done = await asyncio.to_thread(wait_some, list(pending))
            for ref in done:
                job, slot, actor = pending.pop(ref)
                load[slot] -= 1
                try:
                    out: dict[str, Any] = ray.get(ref)
                except RayActorError as err:
                    if not isinstance(err, ActorUnavailableError):
                        replace(slot, actor, type(err).__name__)
                    if job.key in written:
                        continue
                    n = attempts[job.key] = attempts.get(job.key, 0) + 1
                    if n > max_retries:
                        errors.append(
                            f"{job.label}: its Ray actor failed {n} times: {type(err).__name__}"
                        )
                        written.add(job.key)
                    else:
                        stats["actor_retries"] += 1
                        queue.appendleft(job)
                    continue
                accept(job, out)
            launch()
        if writer is not None:
            writer.seal_run(run_id)  # the driver alone writes, so it alone holds the key
    finally:
        if writer is not None:
            writer.close()
        for a in slots:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(a.close.remote(), 10)
            with contextlib.suppress(Exception):
                ray.kill(a, no_restart=True)
        if shutdown:
            ray.shutdown()
    elapsed = time.perf_counter() - t0
    episodes = previous + [rec for _, rec in sorted(finished, key=lambda t: t[0])]
    extra = {"backend": "ray", "actors": n_actors, **(summary_extra or {})}
    summary = summarize(episodes, run_id=run_id, **extra)
    summary.update(
        infra_errors=len(errors),
        infra_retries=stats["infra_retries"] + stats["actor_retries"],
        actor_restarts=stats["actor_restarts"],
        duplicates_dropped=stats["duplicates"],
        resumed=len(previous),
        elapsed_s=round(elapsed, 3),
    )
    if out_dir:
        (Path(out_dir) / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return RunResult(summary, episodes, errors)
