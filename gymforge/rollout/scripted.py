"""Scripted baselines: ``oracle`` (reference path), ``random`` (seeded chaos), ``noop``.

These are the known-good, known-bad and do-nothing agents of the QA suite's baselines.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from gymforge.core.env import SupportsOracle, has_oracle
from gymforge.core.errors import UserError
from gymforge.core.seeding import derive_seed
from gymforge.core.types import Action, Invalid, Observation, Reply, ToolCall
from gymforge.rollout.policy import EpisodeContext, Policy, PolicyTurn

WORDS = ["a", "Ana", "Smith", "C101", "A12345C", "0", "-1", "done", "ünï", "x" * 40]


class OraclePolicy:
    """Follows the environment's reference solution (``SupportsOracle.oracle_action``)."""

    name = checkpoint = "oracle"

    async def start(self, ctx: EpisodeContext) -> None:
        if not has_oracle(ctx.env):
            raise UserError(f"{ctx.env.spec.id} has no oracle (no oracle_action)")
        self._env: SupportsOracle = ctx.env

    async def act(self, observation: Observation) -> PolicyTurn:
        return PolicyTurn(await self._env.oracle_action())


class NoopPolicy:
    """Does nothing: replies with an empty message at once."""

    name = checkpoint = "noop"

    async def start(self, ctx: EpisodeContext) -> None:
        return None

    async def act(self, observation: Observation) -> PolicyTurn:
        return PolicyTurn(Reply(text=""))


class RandomPolicy:
    """Seeded by ``(task_id, seed)``. Mixes valid-looking tool calls with invalid ones
    (unknown tools, wrong types, extra arguments), malformed output and replies."""

    name = checkpoint = "random"

    def __init__(self, reply_rate: float = 0.08) -> None:
        self.reply_rate = reply_rate

    async def start(self, ctx: EpisodeContext) -> None:
        self._r = random.Random(derive_seed("random-policy", ctx.task_id, ctx.seed, ctx.rollout))
        self._tools: list[dict[str, Any]] = []

    async def act(self, observation: Observation) -> PolicyTurn:
        if observation.tools:
            self._tools = [t["function"] for t in observation.tools]
        return PolicyTurn(self._choose())

    def _choose(self) -> Action:
        r = self._r
        u = r.random()
        if u < self.reply_rate or not self._tools:
            return Reply(text=r.choice(["done", "I cannot help.", ""]))
        if u < 0.18:
            return Invalid(raw="<tool_call>{" + r.choice(WORDS), error="unterminated JSON")
        if u < 0.26:
            return ToolCall(name=r.choice(["delete_all", "", "x" * 300]), arguments={})
        fn = r.choice(self._tools)
        props: dict[str, Any] = fn["parameters"].get("properties", {})
        args = {name: self._value(spec.get("type")) for name, spec in props.items()}
        if u < 0.32:
            args[r.choice(["zzz", "__class__"])] = 1
        return ToolCall(name=fn["name"], arguments=args)

    def _value(self, kind: Any) -> Any:
        r = self._r
        if kind == "integer":
            return r.choice([0, 1, -5, 250, 10**12])
        if kind == "number":
            return r.choice([0.0, 1.5, -2.0])
        if kind == "boolean":
            return r.random() < 0.5
        if r.random() < 0.1:
            return r.randint(0, 9)  # wrong type on purpose
        return r.choice(WORDS)


SCRIPTED: dict[str, Callable[[], Policy]] = {
    "oracle": OraclePolicy,
    "random": RandomPolicy,
    "noop": NoopPolicy,
}


def scripted_policy(name: str) -> Callable[[], Policy]:
    """The factory of a scripted policy by name; UserError for an unknown one."""
    try:
        return SCRIPTED[name]
    except KeyError:
        raise UserError(
            f"unknown policy {name!r}; scripted policies: {', '.join(SCRIPTED)}"
        ) from None
