"""Whose failure a Redis task is when the workers playing it keep dying.

A worker that dies (``os._exit``, ``sys.exit`` in the job's code, an abort, exhausted memory,
a lost node) leaves its task unacked; another takes it over, at most ``--max-reclaims``
times, and the next gives it up. Given up as infrastructure (``Abandoned``), the episode
was never written: a policy whose action reaches an environment bug that ends the process
(where one that raises is the attempt's result, judged) took each of its failing episodes
out of the count, three workers apiece. The rule is the one of ``gymforge.core.blame``: a
failure the agent's actions may cause is the agent's outcome when the same job without them
does not fail.

- Every taker records in Redis (``Takers``) the agent's first action before it reaches the
  environment, counting the taker as one whose agent acted; a takeover (which only a death
  makes) keeps each of its actions too, per taker (its delivery number), for the probe.
- A task taken more often than the reclaims allow, whose every earlier taker died after
  the agent acted (``died_on_action``), is played once more by the next worker as the
  probe: the job's reset, the last taker's actions but its last (the one whose step it died
  in) replayed, none of the policy asked (``StoppedPolicy``). Survived, the episode ends
  there, counted, truncated (``WORKER_DIED_ON_ACTION``), with the reward of the steps
  replayed: the steps' costs the dead attempt paid are paid. A probe that dies too (a death
  that came later than its action) is followed by one without the replay; that dying too,
  the task is given up.
- A task a worker died with before the agent acted (its reset, a stalled start, a node lost
  early) is given up as before: ``Abandoned``, infrastructure.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal

from pydantic import TypeAdapter

from gymforge.core.env import Environment
from gymforge.core.errors import WorkerDiedOnAction
from gymforge.core.policy import EpisodeContext, Policy, PolicyTurn
from gymforge.core.types import Action, Observation

ACTION: TypeAdapter[Action] = TypeAdapter(Action)

__all__ = [
    "NOT_KEPT",
    "StoppedPolicy",
    "Takers",
    "deliveries",
    "died_on_action",
    "keeps_actions",
    "record_steps",
]


async def deliveries(r: Any, tasks: str, group: str, entry_id: str) -> int:
    """How many times ``entry_id`` of the stream ``tasks`` was handed to a worker (its first
    read and each takeover; the heartbeat's JUSTID claims do not count); 0 once acked."""
    rows = await r.xpending_range(tasks, group, min=entry_id, max=entry_id, count=1)
    return int(rows[0]["times_delivered"]) if rows else 0


NOT_KEPT: Final = "not kept"
"""``Takers.probe``'s answer when the last taker acted but kept no actions: a first taker
whose worker ran with a larger ``--max-reclaims`` (each worker's own flag) than the one
now past it. Probing then would replay nothing and count the task at its reset, the costs
its steps paid unpaid; the worker plays it as a takeover instead (which keeps each action),
so the next one past the allowance probes that."""


def keeps_actions(delivery: int, max_reclaims: int) -> bool:
    """Whether taker ``delivery`` keeps every action for a probe's replay: a takeover does
    (a probe replays the last taker's, never the first's while one reclaim is allowed); the
    first taker only marks that its agent acted, one round trip an episode where keeping
    them cost one a step (about 0.3 ms of the worker's CPU a step on a 2-core machine)."""
    return delivery > 1 or max_reclaims < 1


def died_on_action(handed: int, acted: int) -> bool:
    """Whether each of the ``handed - 1`` takers before this one (all gone without a result)
    got as far as the agent's first action (or was a probe): ``acted`` of them did."""
    return handed > 1 and acted >= handed - 1


class Takers:
    """What the takers of task entry ``entry_id`` leave in Redis (under ``prefix``; each key
    kept ``ttl_s`` at most, deleted once the task is acked): how many acted, how many were
    probes, and each taker's actions."""

    def __init__(self, r: Any, prefix: str, entry_id: str, ttl_s: int) -> None:
        self.r, self.ttl_s = r, ttl_s
        self.base = f"{prefix}:taken:{entry_id}"

    def actions_key(self, delivery: int) -> str:
        return f"{self.base}:actions:{delivery}"

    def recorder(self, delivery: int, actions: bool = True) -> Callable[[Action], Awaitable[None]]:
        """What taker ``delivery`` awaits before each action reaches the environment: its
        first marks the taker as one whose agent acted; with ``actions`` each is also kept
        for a probe's replay (one command a step). A first taker need not keep them: a
        probe replays the last taker's, which was a takeover (``keeps_actions``)."""
        first = True

        async def record(action: Action) -> None:
            nonlocal first
            key = self.actions_key(delivery)
            if not first:  # the list's time to live was set with its first action
                if actions:
                    await self.r.rpush(key, action.model_dump_json())
                return
            first = False
            [acted] = self._keys("acted")
            async with self.r.pipeline(transaction=False) as pipe:
                pipe.incr(acted)
                pipe.expire(acted, self.ttl_s)
                if actions:
                    pipe.rpush(key, action.model_dump_json())
                    pipe.expire(key, self.ttl_s)
                await pipe.execute()

        return record

    async def probe(self, handed: int) -> list[Action] | Literal["not kept"] | None:
        """The actions the probe of taker ``handed`` replays (the last taker's but its
        last; none when a probe died already), None (the task is given up), or
        ``NOT_KEPT`` when the last taker acted and kept none (play it on, keeping them)."""
        acted, probes = (int(n or 0) for n in await self.r.mget(*self._keys("acted", "probes")))
        if probes >= 2 or not died_on_action(handed, acted + probes):
            return None
        raw = [] if probes else await self.r.lrange(self.actions_key(handed - 1), 0, -1)
        if not probes and not raw:  # a taker that acted and kept them has its first
            return NOT_KEPT
        await self._count("probes")
        return [ACTION.validate_json(a) for a in raw[:-1]]

    def keys(self, handed: int) -> list[str]:
        """Every key the takers of the entry, up to taker ``handed``, may have left."""
        actions = [self.actions_key(n) for n in range(1, handed + 1)]
        return [*self._keys("acted", "probes"), *actions]

    def _keys(self, *names: str) -> list[str]:
        return [f"{self.base}:{name}" for name in names]

    async def _count(self, name: str) -> None:
        [key] = self._keys(name)
        await self.r.incr(key)
        await self.r.expire(key, self.ttl_s)


def record_steps(env: Environment, record: Callable[[Action], Awaitable[Any]]) -> None:
    """Await ``record(action)`` before each of ``env``'s steps runs (where the agent's
    action reaches the environment), so a death in that step is known to follow it."""
    step = env.step

    async def recorded(action: Action) -> Any:
        await record(action)
        return await step(action)

    env.step = recorded  # type: ignore[method-assign]


class StoppedPolicy:
    """``policy``'s identity (name, checkpoint, weight version) for the probe's episode:
    it sends ``actions`` (the agent's, recorded) and then ends the episode
    (``WorkerDiedOnAction``); the policy itself is never started or asked."""

    def __init__(self, policy: Policy, actions: list[Action] | None = None) -> None:
        self.name = policy.name
        self.checkpoint = policy.checkpoint
        self._policy = policy
        self._actions = list(actions or ())

    def weight_version(self) -> Any:
        version = getattr(self._policy, "weight_version", None)
        return version() if callable(version) else version

    async def start(self, ctx: EpisodeContext) -> None:
        return None

    async def act(self, observation: Observation) -> PolicyTurn:
        if self._actions:
            return PolicyTurn(self._actions.pop(0), capture_level="none")
        raise WorkerDiedOnAction(
            "the workers playing this task died each time after the agent acted"
        )
