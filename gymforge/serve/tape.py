"""One served session's episodes as trajectory records, built as the runner builds them.

A session (WebSocket or MCP) plays episodes one after another on its environment; its
``EpisodeTape`` turns each reset and step into the runner's records
(``gymforge.rollout.episode``) and hands every episode to the server's ``Recorder`` when it
ends, however it ends: the environment ending it (terminated or truncated), or the client
starting another over it, the session ending, the server shutting down (``abandon``, with
a reason from ``gymforge.serve.record.END_REASONS``). So every episode a client starts is
in the record.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from gymforge.core.env import Environment, StepResult
from gymforge.core.seeding import fingerprint
from gymforge.core.types import Action, Observation
from gymforge.rollout.episode import episode_record, reset_record, step_record
from gymforge.serve.metrics import Metrics
from gymforge.serve.record import Recorder
from gymforge.trajectory.schema import EpisodeKeys

log = logging.getLogger(__name__)


class EpisodeTape:
    """The open episode of one session (``records`` is None between episodes)."""

    def __init__(
        self, recorder: Recorder, session_id: str, checkpoint: str, metrics: Metrics
    ) -> None:
        self.recorder = recorder
        self.session_id = session_id
        self.checkpoint = checkpoint
        self.metrics = metrics
        self.episodes = 0
        self.records: list[dict[str, Any]] | None = None
        self.base: dict[str, Any] = {}
        self.ended = False

    @property
    def open(self) -> bool:
        return self.records is not None and not self.ended

    async def reset(
        self, env: Environment, task_id: str, seed: int, obs: Observation, reset_ms: float
    ) -> None:
        """Start the records of a new episode (an open one is written as ``abandoned``
        first: call ``abandon`` before the environment's reset, while it still holds it)."""
        fp = fingerprint(await env.snapshot())
        spec = env.spec
        self.episodes += 1
        self.base = EpisodeKeys(
            run_id=self.recorder.run_id,
            episode_id=f"{self.session_id[:12]}-{self.episodes}",
            task_id=task_id,
            seed=seed,
            env_id=spec.id,
            env_version=spec.version,
            renderer_version=spec.renderer_version,
            policy_checkpoint=self.checkpoint,
        ).model_dump()
        self.records = [reset_record(self.base, obs, fp, reset_ms)]
        self.ended = False

    async def step(
        self, env: Environment, action: Action, result: StepResult, step_ms: float
    ) -> int:
        """Record one step (the episode is written when it ends); returns its number."""
        assert self.records is not None and not self.ended
        fp = fingerprint(await env.snapshot())
        timing = {**result.timing, "step_ms": step_ms}
        step = len(self.records)
        self.records.append(step_record(self.base, step, action, None, result, fp, timing))
        if result.terminated or result.truncated:
            self.ended = True
            self.records.append(episode_record(self.base, self.records, result, env))
            await self._write(self.records)
        return step

    async def abandon(self, env: Environment, reason: str) -> None:
        """Write the open episode, if any, unfinished: truncated, ``failure_reason`` reason.
        ``env`` must still be the episode's (not yet reset or closed)."""
        records, self.records = self.records, None
        if records is None or self.ended or env is None:
            return
        end = episode_record(self.base, records, None, env, stopped=reason)
        await self._write([*records, end])

    async def _write(self, records: list[dict[str, Any]]) -> None:
        try:
            await self.recorder.write(records)
        except Exception:  # a refused record must not end the session or keep its env
            self.metrics.errors["record_error"] += 1
            log.exception("could not record episode %s", records[0].get("episode_id"))


def elapsed_ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1e3
