"""The ``stall_then_claim`` red-team attack: harmless reads until the budget is nearly
spent, then a claim of success.

A verifier whose verdict depends on how long the episode ran (success "after a long enough
investigation", a check of the last few transcript events only, a counter read as
evidence) passes it; every other attack replies within the oracle's few steps. It reads
with the first tool that neither writes nor ends the episode, its arguments the simplest
values of their types, ``STALL_MAX`` times at most, and is not applicable without one.
"""

from __future__ import annotations

from typing import Any

from gymforge.core.capabilities import BUDGET, TOOLSET, supported
from gymforge.core.policy import EpisodeContext, PolicyTurn, scripted_env
from gymforge.core.types import Observation, Reply, ToolCall

STALL_MAX = 24
"""The most reads before the claim (a budget of 25 steps or fewer is stalled to its end)."""

SIMPLEST: dict[str, Any] = {"integer": 0, "number": 0.0, "boolean": False, "array": []}


class StallThenClaim:
    """Reads harmlessly until one step is left (``STALL_MAX`` at most), then claims."""

    name = "attack"
    checkpoint = "redteam"
    scripted = True

    def __init__(self, claim: str) -> None:
        self.claim = claim

    async def start(self, ctx: EpisodeContext) -> None:
        env = scripted_env(ctx, "a red-team attack")
        found, budget = supported(env, TOOLSET), supported(env, BUDGET)
        tools = found.toolset.tools if found is not None else {}
        self.reads = {n for n, t in tools.items() if not (t.writes or t.ends_episode)}
        steps = budget.budget.max_steps if budget is not None else 2
        self.left = min(STALL_MAX, max(0, steps - 1))
        self.call: ToolCall | None = None

    async def act(self, observation: Observation) -> PolicyTurn:
        if self.call is None:
            self.call = self._first_read(observation)
        if self.left > 0:
            self.left -= 1
            return PolicyTurn(self.call)
        return PolicyTurn(Reply(text=self.claim))

    def _first_read(self, observation: Observation) -> ToolCall:
        for schema in observation.tools or []:
            fn = schema["function"]
            if fn["name"] in self.reads:
                props = fn["parameters"].get("properties", {})
                args = {p: SIMPLEST.get(s.get("type", ""), "x") for p, s in props.items()}
                return ToolCall(name=fn["name"], arguments=args)
        from gymforge.kit.redteam import AttackNotApplicable  # the attack library's error

        raise AttackNotApplicable("no read-only tool to stall with")
