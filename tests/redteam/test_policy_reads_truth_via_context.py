"""A model-style policy reads the hidden truth through the ``EpisodeContext`` the runner gives it.

The policy is what a model policy, or a harness wrapped as one, looks like to the runner: a
``Policy`` that is not scripted. At ``start`` it searches everything reachable from its
context (fields, containers, object attributes, bound methods, closures) for the environment
and, if it finds one, plays the environment's own oracle, so it earns full reward without
solving anything. Its success would mean every model run can be graded on answers copied
from the hidden task, and "model policies must not read it" is a convention only.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import deque
from typing import Any

from gymforge.core.env import has_oracle
from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Observation, Reply
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import run_episode
from gymforge.trajectory.schema import EpisodeKeys

MAX_VISITS = 5_000


def _neighbours(obj: Any) -> list[Any]:
    if isinstance(obj, (str, bytes, int, float, bool, type(None))):
        return []
    if isinstance(obj, dict):
        return [*obj.keys(), *obj.values()]
    if isinstance(obj, (list, tuple, set, frozenset)):
        return list(obj)
    found: list[Any] = []
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        found += [getattr(obj, f.name, None) for f in dataclasses.fields(obj)]
    found += list(getattr(obj, "__dict__", {}).values())
    found += [getattr(obj, s, None) for s in getattr(type(obj), "__slots__", ())]
    if hasattr(obj, "__self__"):
        found.append(obj.__self__)
    for cell in getattr(obj, "__closure__", None) or ():
        found.append(cell.cell_contents)
    return found


def reachable_oracle(root: Any) -> Any:
    """The first object reachable from ``root`` that has an oracle (the environment), or None."""
    seen: set[int] = set()
    queue: deque[Any] = deque([root])
    while queue and len(seen) < MAX_VISITS:
        obj = queue.popleft()
        if id(obj) in seen or isinstance(obj, type):
            continue
        seen.add(id(obj))
        if has_oracle(obj):
            return obj
        queue.extend(_neighbours(obj))
    return None


class TruthReader:
    """Not scripted: it declares nothing, like any model policy."""

    name = checkpoint = "model-style"

    async def start(self, ctx: EpisodeContext) -> None:
        self.found = reachable_oracle(ctx)

    async def act(self, observation: Observation) -> PolicyTurn:
        if self.found is not None:
            return PolicyTurn(await self.found.oracle_action())
        return PolicyTurn(Reply(text="I cannot see the answer."))


def _keys(task_id: str) -> EpisodeKeys:
    spec = LedgerEnv.spec
    return EpisodeKeys(
        run_id="r",
        episode_id="e",
        task_id=task_id,
        seed=0,
        env_id=spec.id,
        env_version=spec.version,
        renderer_version=spec.renderer_version,
        policy_checkpoint="model-style",
    )


def test_model_policy_cannot_reach_the_environment_through_its_context() -> None:
    task_id = LedgerEnv.tasks.sample(1, 3, "train")[0]
    policy = TruthReader()
    records = asyncio.run(run_episode(LedgerEnv(), policy, _keys(task_id)))
    assert policy.found is None, f"the context leads to {type(policy.found).__name__}"
    assert records[-1]["success"] is False
