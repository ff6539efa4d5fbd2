"""An agent's tool calls edit the hidden truth the verifier compares against. ``expenses``'
decisions and ``support_desk``'s refunds, credits, escalations, identity, slots and issues are
plain validated dicts, written into ``Task.truth`` as they are and shared with the parsed
(vouched) truth the tools and the verifier read: dicts are mutable where the models they
replaced were frozen. Success would be any tool sequence (the oracle's, each red-team case's)
after which ``Task.truth`` or the truth the environment judges with differs from the task as
generated, so a later check, or the next episode on the same task, grades against values the
agent chose."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from gymforge.core.errors import InfraError
from gymforge.envs.expenses import ExpensesEnv
from gymforge.envs.expenses import redteam as expenses_attacks
from gymforge.envs.support_desk import SupportDeskEnv
from gymforge.envs.support_desk import redteam as desk_attacks
from gymforge.qa.episodes import play
from gymforge.world.attacks import PlanAttack

ENVS: dict[str, tuple[Any, Any]] = {
    "expenses": (ExpensesEnv, expenses_attacks),
    "support_desk": (SupportDeskEnv, desk_attacks),
}


@pytest.mark.parametrize("name", sorted(ENVS))
def test_no_tool_sequence_changes_the_truth(name: str) -> None:
    env_cls, attacks = ENVS[name]
    policies = [("oracle", lambda: PlanAttack(lambda t, p: p))] + [
        (case.name, case.make_policy) for case in attacks.REDTEAM
    ]

    async def go() -> int:
        played = 0
        for tid in env_cls.tasks.sample(3, 5, "all"):
            want = copy.deepcopy(env_cls.tasks.resolve(tid).truth)
            for label, make in policies:
                env = env_cls()
                try:
                    try:
                        await play(env, make(), tid, 0)
                    except InfraError:  # a red-team case that does not apply to this task
                        continue
                    task = env.task
                    assert task is not None
                    assert task.truth == want, f"{tid} after {label}"
                    judged = env.truth_of(task).model_dump(by_alias=True, exclude_unset=True)
                    assert judged == want, f"{tid} after {label}"
                    played += 1
                finally:
                    await env.close()
        return played

    assert asyncio.run(go()) > len(policies)
