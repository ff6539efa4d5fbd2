"""``LocalExecutor``: episodes on this process's event loop, each on a pooled environment.

Environments are built lazily from the factory and reused (reset isolation makes that
safe); one that saw a failed or abandoned attempt is closed, never reused, since it may be
left mid-step. New episodes pass an ``AdmissionGate``, so a burst of starts never stalls
the steps of the episodes already in flight.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from gymforge.core.env import Environment
from gymforge.core.policy import Policy
from gymforge.rollout import gcpace
from gymforge.rollout.admission import AdmissionGate
from gymforge.rollout.executors.base import Records, play_attempt
from gymforge.rollout.jobs import Job
from gymforge.rollout.spec import RunSpec


class LocalExecutor:
    """Play jobs here. ``env_factory`` and ``policy_factory`` are zero-argument factories
    (one policy per episode); ``close_policy`` is awaited once the run is over (an HTTP
    client's ``aclose``, say)."""

    name = "local"

    def __init__(
        self,
        env_factory: Callable[[], Environment],
        policy_factory: Callable[[], Policy],
        *,
        close_policy: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.env_factory = env_factory
        self.policy_factory = policy_factory
        self.close_policy = close_policy
        self._idle: list[Environment] = []
        self._gate: AdmissionGate | None = None
        self._run_id = ""
        self._timeout: float | None = None
        self._paced = False

    def capacity(self, spec: RunSpec, jobs: int) -> int:
        return spec.concurrency

    async def open(self, spec: RunSpec, run_id: str) -> None:
        self._run_id, self._timeout = run_id, spec.episode_timeout
        self._gate = AdmissionGate()  # one per event loop: made on the run's loop
        if not self._paced:  # the collector stays paced between episodes (gcpace.hold)
            gcpace.hold()
            self._paced = True

    async def play(self, job: Job) -> Records:
        assert self._gate is not None, "LocalExecutor.play before open"
        env = self._idle.pop() if self._idle else self.env_factory()
        reusable = False
        try:
            await self._gate.enter()
            policy = self.policy_factory()
            records = await play_attempt(
                env, policy, job.keys(self._run_id, env, policy), self._timeout
            )
            reusable = True
            return records
        finally:
            if reusable:
                self._idle.append(env)
            else:  # a failed or abandoned episode may leave the env mid-step
                await env.close()

    async def close(self) -> None:
        if self._paced:
            self._paced = False
            gcpace.release()
        idle, self._idle = self._idle, []
        for env in idle:
            await env.close()
        if self.close_policy is not None:
            await self.close_policy()

    def stats(self) -> dict[str, Any]:
        return {}
