"""The runner: one ``run(spec, executor)`` for every place episodes run.

``run`` takes the jobs of a ``RunSpec`` (its ``jobs``, or its ``tasks`` expanded into groups
of ``group`` rollouts per epoch: same task and environment seed, different sampling seeds,
for GRPO-style training), keeps up to ``executor.capacity`` of them in flight on the
executor (``executors.LocalExecutor``, ``RayExecutor``, ``RedisExecutor``), and writes each
finished episode to ``trajectories.jsonl`` durably. What is decided here, once, for
every executor:

- **Resume.** ``spec.resume`` keeps the episodes already in the file (a torn tail dropped,
  the seals verified) and runs only the missing jobs, so a crash or a dead server loses no
  finished episode and duplicates none. (Whether a directory may be resumed at all, the
  manifest comparison and ``--overwrite``, is ``plan.prepare``'s guard.)
- **Retries.** The rule is ``failures``'s: an attempt that fails for a reason a retry can
  fix (a retryable ``InfraError``: a policy server down, an episode over its timeout, a dead
  actor or node) is retried, up to ``spec.max_retries`` times, and never scored. A mistake,
  which the same input always hits (a ``UserError``: the oracle on a task without a
  reference solution, ``recorded:R`` without the episode; a refused request), is never
  retried: it stops the run as a ``UserError``. ``ExecutorDown`` (no workers, a lost
  cluster) is raised as it is. ``Abandoned`` (an attempt the executor re-played as often as
  it allows: a Redis task whose workers kept dying) gives the job up at once. Any other
  exception from ``play`` is a bug in the job's code: it stops the run with its traceback,
  never retried, on every executor.
- **Stop after failures.** When jobs of ``spec.stop_after_failed_tasks`` different tasks
  have used up their retries with no episode finishing in between, the infrastructure is
  down: the run stops (the attempts in flight are cut short) and reports every job it did
  not finish as an infrastructure error, rather than spend each remaining job's retries
  writing nothing. ``None`` never stops; the rollouts of one task count once. Why a run
  stopped is ``summary["infra_stopped"]``.
- **Writing and sealing.** Only the runner writes, so only it holds the seal key
  (``spec.seal_key``, default ``$GYMFORGE_SEAL_KEY``): every record is sealed, and a run
  that completes (stopped or not) writes ``summary.json`` and then ends the file with a run
  seal over it that records the sha256 of ``manifest.json`` and ``summary.json``. Each job is
  written at most once, whatever an executor delivers. Writing is a group commit
  (``output.GroupCommit``): off the event loop, one fsync for the episodes that finished
  together, and an episode counts as finished (``summary.json``, ``on_episode``) only once
  it is on disk. A worker plays its next job while its last episodes are written (at most
  ``WRITE_AHEAD`` of them), so the episodes of one worker share an fsync too: a crash loses
  the episodes in flight and those not yet on disk, never one that was counted.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gymforge.core.errors import InfraError
from gymforge.rollout.executors.base import Abandoned, Executor, ExecutorDown
from gymforge.rollout.failures import as_mistake, retryable
from gymforge.rollout.gcpace import paced_collections
from gymforge.rollout.jobs import Job
from gymforge.rollout.live_progress import LiveProgress
from gymforge.rollout.output import (
    GroupCommit,
    interrupted_summary,
    prepare_output,
    write_summary,
)
from gymforge.rollout.spec import RunSpec
from gymforge.rollout.summary import summarize
from gymforge.settings import Settings
from gymforge.trajectory.documents import document_digests
from gymforge.verify.services import run_services

log = logging.getLogger("gymforge.runner")

WRITE_AHEAD = 8
"""Episodes a worker may have finished and handed to the writer, not yet on disk, while it
plays the next: the episodes that finish during one fsync share the next one."""

OnEpisode = Callable[[dict[str, Any]], None]
OnResumed = Callable[[list[dict[str, Any]]], None]


@dataclass
class RunResult:
    summary: dict[str, Any]
    episodes: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run; ``summary`` (also in ``out/summary.json``) covers the episodes
    that finished before it."""

    def __init__(self, out: Path | None, summary: dict[str, Any]) -> None:
        super().__init__("interrupted")
        self.out = out
        self.summary = summary


def run_sync(
    spec: RunSpec,
    executor: Executor,
    on_episode: OnEpisode | None = None,
    on_resumed: OnResumed | None = None,
) -> RunResult:
    """``run`` on a fresh event loop. Interrupted (Ctrl-C), it still writes ``summary.json``
    over the episodes that finished and raises ``RunInterrupted`` carrying it; ``--resume``
    continues from there."""
    try:
        return asyncio.run(run(spec, executor, on_episode=on_episode, on_resumed=on_resumed))
    except KeyboardInterrupt:
        summary = interrupted_summary(spec.out, spec.summary_config(), spec.seal_key)
        raise RunInterrupted(spec.out, summary) from None


async def run(
    spec: RunSpec,
    executor: Executor,
    *,
    on_episode: OnEpisode | None = None,
    on_resumed: OnResumed | None = None,
    settings: Settings | None = None,
) -> RunResult:
    """Play every job of ``spec`` on ``executor``; see the module docstring.
    ``spec.out=None`` keeps records in memory only. ``on_episode`` sees each episode record
    as it is written; ``on_resumed`` sees, once before any is played, the episode records a
    resumed file already holds. ``settings`` configure the run's verifier services (its
    sandbox, its math pool; ``gymforge.verify.services``), which the run owns and closes at
    its end; without them the caller's active services are used (a CLI command's), else new
    ones from the process environment."""
    with run_services(settings):
        return await _run(spec, executor, on_episode, on_resumed)


async def _run(
    spec: RunSpec,
    executor: Executor,
    on_episode: OnEpisode | None,
    on_resumed: OnResumed | None,
) -> RunResult:
    run_id = uuid.uuid4().hex[:12]
    config = spec.summary_config()
    output = prepare_output(spec.out, spec.resume, spec.seal_key)
    previous, done = output.previous, output.done
    all_jobs = spec.job_list()
    jobs = [j for j in all_jobs if j.key not in done]
    if on_resumed is not None:  # this run's jobs a resumed file already holds
        keys = {j.key for j in all_jobs}
        on_resumed([e for e in previous if (e["task_id"], e["seed"], e.get("rollout", 0)) in keys])
    run = _Run(spec, executor, on_episode)
    run.live = LiveProgress(spec.out)
    writer = output.writer(config)
    run.commit = GroupCommit(writer) if writer is not None else None
    with paced_collections():  # the summary's walk over every episode too (gcpace)
        try:
            try:
                await executor.open(spec, run_id)
                await run.play_all(jobs, executor.capacity(spec, len(jobs)))
            finally:
                try:
                    await executor.close()
                finally:
                    if run.commit is not None:
                        await run.commit.drain()
            episodes = previous + [rec for _, rec in sorted(run.finished, key=lambda t: t[0])]
            summary = summarize(episodes, run_id=run_id, **config)
            summary.update(
                backend=executor.name,
                infra_errors=len(run.errors),
                infra_retries=run.retries,
                infra_stopped=run.stopped[0] if run.stopped else None,
                resumed=len(previous),
                **executor.stats(),
            )
            write_summary(spec.out, summary)
            if writer is not None and spec.out is not None:  # last: it covers the documents
                writer.seal_run(run_id, document_digests(spec.out))
        finally:
            run.live.close()
            if writer is not None:
                writer.close()  # nothing may write after the file is closed
        return RunResult(summary, episodes, run.errors)


class _Run:
    """The in-flight state of one ``run``: its workers, retries and the stop rule."""

    def __init__(self, spec: RunSpec, executor: Executor, on_episode: OnEpisode | None) -> None:
        self.spec = spec
        self.executor = executor
        self.on_episode = on_episode
        self.commit: GroupCommit | None = None
        self.queue: asyncio.Queue[Job] = asyncio.Queue()
        self.finished: list[tuple[int, dict[str, Any]]] = []
        self.errors: list[str] = []
        self.retries = 0
        self.failing: set[tuple[str, int]] = set()  # tasks given up on since the last finish
        self.stopped: list[str] = []  # why the run stopped, once it has
        self.in_flight: set[asyncio.Task[list[dict[str, Any]]]] = set()
        self.live = LiveProgress(None)

    async def play_all(self, jobs: list[Job], capacity: int) -> None:
        for job in jobs:
            self.queue.put_nowait(job)
        workers = max(1, min(capacity, len(jobs)))
        tasks = [asyncio.create_task(self.worker()) for _ in range(workers)]
        try:
            await asyncio.gather(*tasks)
        finally:
            for t in tasks:  # one worker raised: the others must not outlive the run
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        while not self.queue.empty():  # the run stopped: jobs never started
            job = self.queue.get_nowait()
            self.errors.append(f"{job.label}: not run: {self.stopped[0]}")

    def give_up(self, job: Job, err: InfraError) -> None:
        self.errors.append(f"{job.label}: {err}")
        self.failing.add((job.task_id, job.seed))
        limit = self.spec.stop_after_failed_tasks
        if limit and len(self.failing) >= limit and not self.stopped:
            self.stopped.append(
                f"episodes of {len(self.failing)} different tasks failed for infrastructure "
                "reasons after all retries, with no episode finishing in between"
            )
            log.error("stopping the run: %s; last: %s", self.stopped[0], err)
            for other in self.in_flight:  # their episodes would fail the same way
                other.cancel()

    async def attempts(self, job: Job) -> list[dict[str, Any]]:
        """Play ``job`` until an attempt succeeds; [] when it is given up or cut short."""
        max_retries = self.spec.max_retries
        self.live.change(+1)
        try:
            return await self._attempts(job, max_retries)
        finally:
            self.live.change(-1)

    async def _attempts(self, job: Job, max_retries: int) -> list[dict[str, Any]]:
        for n in range(max_retries + 1):
            current = asyncio.create_task(self.executor.play(job))
            self.in_flight.add(current)
            try:
                return await current
            except asyncio.CancelledError:
                this = asyncio.current_task()
                if not (self.stopped and current.cancelled()) or (this and this.cancelling()):
                    raise  # not the stop's doing: the worker itself is cancelled
                self.errors.append(f"{job.label}: cut short: {self.stopped[0]}")
                return []
            except ExecutorDown:
                raise
            except Abandoned as err:  # re-played by the executor already: never again
                log.error("%s: given up: %s", job.label, err)
                self.give_up(job, err)
                return []
            except InfraError as err:
                if not retryable(err):  # every attempt would fail the same way
                    raise as_mistake(err) from err
                log.warning("%s: attempt %d failed: %s", job.label, n + 1, err)
                if n == max_retries or self.stopped:
                    self.give_up(job, err)
                    return []
                self.retries += 1
            finally:
                self.in_flight.discard(current)
        return []

    async def worker(self) -> None:
        """Play jobs until none is left. A finished episode is handed to the group commit
        and the worker plays on while it is written (up to ``WRITE_AHEAD`` episodes behind,
        so one worker's episodes share an fsync); each counts as finished, in the order
        played, only once it is on disk. A refused or failed write raises here (the run
        stops with the writer's error) once the worker's episodes before it are counted;
        the episodes handed over after it are still written, whole but uncounted, as the
        episodes in flight at any stop."""
        writing: _Writing = deque()
        try:
            while not self.queue.empty() and not self.stopped:
                job = self.queue.get_nowait()
                records = await self.attempts(job)
                if _due(writing, WRITE_AHEAD):  # a failed write stops the worker
                    await self._count(writing, WRITE_AHEAD)
                if not records:
                    continue
                self.failing.clear()
                if self.commit is None:
                    self._finish(job, records)
                    continue
                writing.append((job, records, self.commit.submit(records)))
                if _due(writing, WRITE_AHEAD):
                    await self._count(writing, WRITE_AHEAD)
            await self._count(writing, 0)
        finally:
            if writing:  # the worker failed: the writes handed over still end, uncounted
                tasks = [task for _, _, task in writing]
                await asyncio.wait(tasks)
                for task in tasks:
                    _ = task.cancelled() or task.exception()  # retrieved: not logged as lost

    async def _count(self, writing: _Writing, room: int) -> None:
        """Count the episodes at the front of ``writing`` that are on disk, waiting for the
        oldest while more than ``room`` are being written."""
        while _due(writing, room):
            job, records, task = writing[0]
            await task  # raises the writer's error for this episode
            writing.popleft()
            self._finish(job, records)

    def _finish(self, job: Job, records: list[dict[str, Any]]) -> None:
        self.finished.append((job.index, records[-1]))
        if self.on_episode is not None:
            self.on_episode(records[-1])


_Writing = deque[tuple[Job, list[dict[str, Any]], "asyncio.Future[None]"]]
"""A worker's episodes handed to the group commit, oldest first, with their writes."""


def _due(writing: _Writing, room: int) -> bool:
    """Whether ``_Run._count`` has an episode to count or wait for: asked before calling it,
    so a worker with nothing to count makes no coroutine for it."""
    return bool(writing) and (len(writing) > room or writing[0][2].done())
