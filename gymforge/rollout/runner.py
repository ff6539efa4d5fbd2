"""The runner: many episodes, groups, a pool of environments, durable and resumable output.

``run`` expands ``(task_id, seed)`` pairs into groups of ``group`` rollouts (same task and
environment seed, different sampling seeds, for GRPO-style training), plays them with up to
``concurrency`` episodes in flight (each on its own environment instance), and writes each
finished episode to ``trajectories.jsonl`` with one fsync. Infrastructure failures (a policy
server down, an episode over its wall-clock timeout) are retried on a fresh environment and
never scored. When episodes of ``stop_after_failed_tasks`` different tasks have used up their
retries with no episode finishing in between, the infrastructure is down: the run stops (the
episodes in flight are cut short) and reports every job it did not finish as an
infrastructure error, rather than spend each remaining job's retries writing nothing.
``resume=True`` keeps the episodes already in the file (dropping a torn tail) and runs only
the missing ones, so a crash or a dead server loses no finished episode and duplicates none.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gymforge.core.env import Environment
from gymforge.core.errors import InfraError, UserError
from gymforge.core.policy import Policy
from gymforge.core.seeding import derive_seed
from gymforge.rollout.admission import AdmissionGate
from gymforge.rollout.episode import run_episode
from gymforge.rollout.summary import summarize
from gymforge.trajectory.io import TrajectoryWriter, recover_run
from gymforge.trajectory.schema import EpisodeKeys
from gymforge.trajectory.seal import ChainState, load_key

log = logging.getLogger("gymforge.runner")

STOP_AFTER_FAILED_TASKS = 2
"""The default ``stop_after_failed_tasks`` of :func:`run`."""


@dataclass(frozen=True)
class Job:
    index: int
    task_id: str
    seed: int
    rollout: int = 0

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.task_id, self.seed, self.rollout)

    @property
    def label(self) -> str:
        """How log and error lines name this job."""
        return f"{self.task_id} seed {self.seed} rollout {self.rollout}"

    @property
    def sampling_seed(self) -> int:
        return derive_seed("sampling", self.task_id, self.seed, self.rollout) % 2**31

    def keys(self, run_id: str, env: Environment, policy: Policy) -> EpisodeKeys:
        """The identity stamped on every record of this job's episode (any backend)."""
        return EpisodeKeys(
            run_id=run_id,
            episode_id=f"{run_id}-{self.index:06d}",
            task_id=self.task_id,
            seed=self.seed,
            env_id=env.spec.id,
            env_version=env.spec.version,
            renderer_version=env.spec.renderer_version,
            policy_checkpoint=policy.checkpoint,
            weight_version=weight_version(policy),
            rollout=self.rollout,
            sampling_seed=self.sampling_seed,
        )


def expand(pairs: Sequence[tuple[str, int]], group: int = 1) -> list[Job]:
    """Each ``(task_id, seed)`` pair becomes ``group`` jobs, rollouts 0..group-1."""
    if group < 1:
        raise ValueError("group must be >= 1")
    return [
        Job(i * group + r, task_id, seed, r)
        for i, (task_id, seed) in enumerate(pairs)
        for r in range(group)
    ]


@dataclass
class RunResult:
    summary: dict[str, Any]
    episodes: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


async def run(
    env_factory: Callable[[], Environment],
    policy_factory: Callable[[], Policy],
    jobs: Sequence[tuple[str, int]] | Sequence[Job],
    out_dir: str | Path | None,
    *,
    concurrency: int = 1,
    group: int = 1,
    episode_timeout_s: float | None = None,
    max_retries: int = 2,
    resume: bool = False,
    on_episode: Callable[[dict[str, Any]], None] | None = None,
    summary_extra: dict[str, Any] | None = None,
    stop_after_failed_tasks: int | None = STOP_AFTER_FAILED_TASKS,
    seal_key: bytes | None = None,
) -> RunResult:
    """Run every job. ``jobs`` are ``(task_id, seed)`` pairs (expanded by ``group``) or
    ``Job``s. ``out_dir=None`` keeps records in memory only. ``stop_after_failed_tasks``:
    see the module docstring (``None`` never stops; the rollouts of one task count once, so
    one task the infrastructure cannot run does not stop the run). Why a run stopped is
    ``summary["infra_stopped"]``. ``seal_key`` (default: ``$GYMFORGE_SEAL_KEY``, see
    ``gymforge.trajectory.seal``) seals every record, and a run that completes (stopped or
    not) ends the file with a run seal over it, ``summary_extra`` being its configuration."""
    given = [j for j in jobs if isinstance(j, Job)]
    all_jobs = given or expand([j for j in jobs if not isinstance(j, Job)], group)
    run_id = uuid.uuid4().hex[:12]
    path = Path(out_dir) / "trajectories.jsonl" if out_dir else None
    output = prepare_output(path, resume, seal_key)
    previous, done = output.previous, output.done
    all_jobs = [j for j in all_jobs if j.key not in done]
    writer = output.writer(summary_extra)
    queue: asyncio.Queue[Job] = asyncio.Queue()
    for job in all_jobs:
        queue.put_nowait(job)
    finished: list[tuple[int, dict[str, Any]]] = []
    errors: list[str] = []
    retries = 0
    failing: set[tuple[str, int]] = set()  # tasks given up on since the last finished episode
    stopped: list[str] = []  # why the run stopped, once it has
    in_flight: set[asyncio.Task[list[dict[str, Any]]]] = set()
    gate = AdmissionGate()

    def give_up(job: Job, err: InfraError) -> None:
        errors.append(f"{job.label}: {err}")
        failing.add((job.task_id, job.seed))
        if stop_after_failed_tasks and len(failing) >= stop_after_failed_tasks and not stopped:
            stopped.append(
                f"episodes of {len(failing)} different tasks failed for infrastructure "
                "reasons after all retries, with no episode finishing in between"
            )
            log.error("stopping the run: %s; last: %s", stopped[0], err)
            for other in in_flight:  # their episodes would fail the same way
                other.cancel()

    async def attempt(env: Environment, job: Job) -> list[dict[str, Any]]:
        await gate.enter()  # a burst of starts must not stall the steps of episodes in flight
        policy = policy_factory()
        episode = run_episode(env, policy, job.keys(run_id, env, policy))
        if episode_timeout_s is None:
            return await episode
        try:
            return await asyncio.wait_for(episode, episode_timeout_s)
        except TimeoutError as err:
            raise InfraError(f"episode exceeded its {episode_timeout_s} s timeout") from err

    async def worker() -> None:
        nonlocal retries
        env = env_factory()
        try:
            while not queue.empty() and not stopped:
                job = queue.get_nowait()
                records: list[dict[str, Any]] = []
                for n in range(max_retries + 1):
                    current = asyncio.create_task(attempt(env, job))
                    in_flight.add(current)
                    try:
                        records = await current
                        break
                    except asyncio.CancelledError:
                        this = asyncio.current_task()
                        if not (stopped and current.cancelled()) or (this and this.cancelling()):
                            raise  # not the stop's doing: the worker itself is cancelled
                        errors.append(f"{job.label}: cut short: {stopped[0]}")
                        await env.close()
                        env = env_factory()
                        break
                    except InfraError as err:
                        if not err.retryable:  # a refused request: every episode would fail
                            raise UserError(f"the policy's requests are refused: {err}") from err
                        log.warning(
                            "%s seed %d rollout %d: attempt %d failed: %s",
                            job.task_id,
                            job.seed,
                            job.rollout,
                            n + 1,
                            err,
                        )
                        await env.close()  # a failed episode may leave the env mid-step
                        env = env_factory()
                        if n == max_retries or stopped:
                            give_up(job, err)
                            break
                        retries += 1
                    finally:
                        in_flight.discard(current)
                if not records:
                    continue
                failing.clear()
                if writer is not None:
                    writer.write_episode(records)
                finished.append((job.index, records[-1]))
                if on_episode is not None:
                    on_episode(records[-1])
        finally:
            await env.close()

    try:
        workers = max(1, min(concurrency, len(all_jobs)))
        await asyncio.gather(*(worker() for _ in range(workers)))
        if writer is not None:
            writer.seal_run(run_id)
    finally:
        if writer is not None:
            writer.close()
    while not queue.empty():  # the run stopped: jobs never started
        job = queue.get_nowait()
        errors.append(f"{job.label}: not run: {stopped[0]}")
    episodes = previous + [rec for _, rec in sorted(finished, key=lambda t: t[0])]
    summary = summarize(episodes, run_id=run_id, **(summary_extra or {}))
    summary.update(
        infra_errors=len(errors),
        infra_retries=retries,
        infra_stopped=stopped[0] if stopped else None,
        resumed=len(previous),
    )
    if out_dir:
        (Path(out_dir) / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return RunResult(summary, episodes, errors)


@dataclass
class Output:
    """Every backend's writer set-up (``prepare_output``): where the trajectories go, the
    seal key, and what a resumed file already holds."""

    path: Path | None
    resume: bool
    key: bytes | None
    previous: list[dict[str, Any]] = field(default_factory=list)
    state: ChainState | None = None

    @property
    def done(self) -> set[tuple[str, int, int]]:
        """The job keys of the finished episodes kept from a resumed file."""
        return {(e["task_id"], e["seed"], e.get("rollout", 0)) for e in self.previous}

    def writer(self, config: dict[str, Any] | None) -> TrajectoryWriter | None:
        """The writer (None without a path), continuing a resumed file's keyed chain;
        ``config`` is what its run seal records."""
        if self.path is None:
            return None
        return TrajectoryWriter(
            self.path, append=self.resume, key=self.key, config=config, state=self.state
        )


def prepare_output(path: Path | None, resume: bool, seal_key: bytes | None) -> Output:
    """Resolve the seal key (``seal_key``, else ``$GYMFORGE_SEAL_KEY``) and, for a resumed
    file, keep its finished episodes (the torn tail dropped, the seals verified)."""
    out = Output(path, resume, seal_key if seal_key is not None else load_key())
    if path is not None and resume and path.exists():
        out.previous, out.state = recover_run(path, out.key)
        log.info("resume: %d episodes kept", len(out.previous))
    return out


def weight_version(policy: Policy) -> str | None:
    """The policy's current weight version as a string (a callable is called), or None."""
    version = getattr(policy, "weight_version", None)
    version = version() if callable(version) else version
    return None if version is None else str(version)
