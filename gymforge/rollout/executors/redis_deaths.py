"""Whose failure a Redis task is when the workers playing it keep dying.

A worker that dies (``os._exit``, ``sys.exit`` in the job's code, an abort, exhausted memory,
a lost node) leaves its task unacked; another takes it over, at most ``--max-reclaims``
times, and the next gives it up. Given up as infrastructure (``Abandoned``), the episode
was never written: a policy whose action reaches an environment bug that ends the process
(where one that raises is the attempt's result, judged) took each of its failing episodes
out of the count, three workers apiece. The rule is the one of ``gymforge.core.blame``: a
failure the agent's actions may cause is the agent's outcome when the same job without them
does not fail.

- Every worker marks, before the agent's first action reaches the environment, that the
  attempt it plays got that far (``mark_first_step``: a count under ``acted_key``, kept
  until the task is acked).
- A task taken more often than the reclaims allow, whose every earlier taker died after the
  agent acted (``died_on_action``), is played once more up to the agent's first action
  (``StoppedPolicy``): the probe, the job's own reset with none of the agent's actions.
  Survived, the episode ends there, counted, truncated, with no step
  (``WORKER_DIED_ON_ACTION``). If the probe kills this worker too, the next finds one taker
  that never acted and gives the task up.
- A task a worker died with before the agent acted (its reset, a stalled start, a node lost
  early) is given up as before: ``Abandoned``, infrastructure.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from gymforge.core.env import Environment
from gymforge.core.errors import WorkerDiedOnAction
from gymforge.core.policy import EpisodeContext, Policy, PolicyTurn
from gymforge.core.types import Action, Observation

__all__ = [
    "StoppedPolicy",
    "acted_key",
    "acted_marker",
    "deliveries",
    "died_on_action",
    "mark_first_step",
]


async def deliveries(r: Any, tasks: str, group: str, entry_id: str) -> int:
    """How many times ``entry_id`` of the stream ``tasks`` was handed to a worker (its first
    read and each takeover; the heartbeat's JUSTID claims do not count); 0 once acked."""
    rows = await r.xpending_range(tasks, group, min=entry_id, max=entry_id, count=1)
    return int(rows[0]["times_delivered"]) if rows else 0


def acted_key(prefix: str, entry_id: str) -> str:
    """The count of a task entry's takers whose agent acted."""
    return f"{prefix}:acted:{entry_id}"


def acted_marker(r: Any, key: str, ttl_s: int) -> Callable[[], Awaitable[None]]:
    """The ``mark`` of one taker: counts it under ``key`` (deleted once the task is acked;
    else kept ``ttl_s``)."""

    async def mark() -> None:
        await r.incr(key)
        await r.expire(key, ttl_s)

    return mark


def died_on_action(handed: int, acted: int) -> bool:
    """Whether each of the ``handed - 1`` takers before this one (all gone without a result)
    got as far as the agent's first action: ``acted`` of them did."""
    return handed > 1 and acted >= handed - 1


def mark_first_step(env: Environment, mark: Callable[[], Awaitable[Any]]) -> None:
    """Await ``mark`` once, before ``env``'s first step runs (where the agent's first action
    reaches the environment), so a death in that step is known to follow it."""
    step = env.step
    marked = False

    async def first_marked(action: Action) -> Any:
        nonlocal marked
        if not marked:
            marked = True
            await mark()
        return await step(action)

    env.step = first_marked  # type: ignore[method-assign]


class StoppedPolicy:
    """``policy``'s identity (name, checkpoint, weight version) for the probe's episode,
    which it ends before the agent's first action (``WorkerDiedOnAction``); the policy itself
    is never started or asked."""

    def __init__(self, policy: Policy) -> None:
        self.name = policy.name
        self.checkpoint = policy.checkpoint
        self._policy = policy

    def weight_version(self) -> Any:
        version = getattr(self._policy, "weight_version", None)
        return version() if callable(version) else version

    async def start(self, ctx: EpisodeContext) -> None:
        return None

    async def act(self, observation: Observation) -> PolicyTurn:
        raise WorkerDiedOnAction(
            "the workers playing this task died each time after the agent acted"
        )
