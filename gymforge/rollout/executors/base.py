"""The executor contract: schedule one attempt of a job somewhere, return its records.

An executor knows *where* episodes run (this event loop, Ray actors, Redis workers) and
nothing else: the runner (``gymforge.rollout.runner``) owns job expansion, resume,
retries, the stop-after-failures rule and the writer, once for every executor.

``play(job)`` plays one attempt and returns its records, or raises ``InfraError`` (the
runner retries it, or gives up) — a non-retryable one (a refused request) stops the run,
and ``ExecutorDown`` (the executor itself cannot go on: no workers, a lost cluster) ends the
run at once. ``Abandoned`` (an attempt the executor already re-played as often as it
allows) is given up without a retry. Any other exception is a bug in the job's code (the
environment, its verifier, the policy's): it stops the run with its traceback, and a remote
executor raises it so too (``redis_entries.WorkerBug``), never retried. Cancelling ``play``
abandons the attempt; nothing it returns later is used.
"""

from __future__ import annotations

from typing import Any, Protocol

from gymforge.core.env import Environment
from gymforge.core.errors import InfraError
from gymforge.core.policy import Policy
from gymforge.rollout.episode import run_episode
from gymforge.rollout.jobs import Job
from gymforge.rollout.spec import RunSpec
from gymforge.trajectory.schema import EpisodeKeys

Records = list[dict[str, Any]]


class ExecutorDown(InfraError):
    """The executor cannot play any further job (its workers or cluster are gone)."""

    retryable = False


class Abandoned(InfraError):
    """The executor gave up on an attempt after its own bounded re-plays (a Redis task whose
    workers died each time they took it): the runner gives the job up at once, an
    infrastructure error that is never queued again as a fresh attempt (``--resume`` plays
    it once more)."""

    retryable = False


class Refused(InfraError):
    """A remote attempt's policy requests were refused (not worth retrying anywhere)."""

    retryable = False


class Executor(Protocol):
    """Where a run's episodes are played (see the module docstring)."""

    name: str
    """``local``, ``ray`` or ``redis``: recorded in the summary as ``backend``."""

    def capacity(self, spec: RunSpec, jobs: int) -> int:
        """How many jobs the runner keeps in flight at once (at least 1)."""
        ...

    async def open(self, spec: RunSpec, run_id: str) -> None:
        """Get ready to play ``spec``'s jobs in run ``run_id`` (start actors, connect)."""
        ...

    async def play(self, job: Job) -> Records:
        """One attempt at ``job``: its records, or ``InfraError``."""
        ...

    async def close(self) -> None:
        """Release everything ``open`` took; called once, also after a failed ``open``."""
        ...

    def stats(self) -> dict[str, Any]:
        """Executor facts for the run summary (e.g. ``actor_restarts``)."""
        ...


async def play_attempt(
    env: Environment, policy: Policy, keys: EpisodeKeys, timeout_s: float | None
) -> Records:
    """One episode on ``env`` under the spec's ``episode_timeout`` (where the episode runs,
    so time spent queued for a remote worker never counts). Past the timeout, an episode in
    which the agent acted is its counted failure (``EPISODE_TIMEOUT``); one that
    never got that far is an ``InfraError`` (``run_episode``)."""
    return await run_episode(env, policy, keys, timeout_s)
