"""``SkilledPolicy``: a scripted agent of known skill, for calibration and evaluation tests.

``skilled:P`` or ``skilled:1=0.9,2=0.5,3=0.1,*=0.2`` names one: a success probability for
every task, or one per difficulty level (``*`` for the rest).
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from gymforge.core.env import SupportsOracle
from gymforge.core.errors import UnknownTaskError, UserError
from gymforge.core.policy import EpisodeContext, PolicyTurn, scripted_env
from gymforge.core.seeding import derive_seed
from gymforge.core.types import Observation, Reply
from gymforge.tasks.task_id import parse_task_id

NONSENSE = "Done. Everything is taken care of."
"""What a ``SkilledPolicy`` says when its coin says fail: a confident, empty claim."""


class SkilledPolicy:
    """Succeeds with a known probability per task.

    At ``start`` a coin is tossed from a hash of ``(task_id, sampling_seed)`` alone, so the
    outcome of a rollout is deterministic and the rollouts of a group are independent
    draws. Heads (probability ``p``): follow the environment's oracle. Tails: reply
    :data:`NONSENSE` at once. On an environment whose oracle always succeeds the true pass
    rate of every task is exactly ``p`` of that task, which is what calibration tests
    recover. ``skill`` is one probability, or a mapping from difficulty level to
    probability (key ``None`` for tasks of other levels, default 0).
    """

    name = "skilled"
    scripted = True

    def __init__(self, skill: float | Mapping[int | None, float]) -> None:
        values = [skill] if isinstance(skill, int | float) else list(skill.values())
        if not all(0.0 <= float(v) <= 1.0 for v in values):
            raise UserError(f"skill probabilities must lie in [0, 1], got {skill!r}")
        self.skill = skill
        self.checkpoint = "skilled:" + _format_skill(skill)
        self.followed: bool | None = None

    def probability(self, task_id: str) -> float:
        """The known success probability of ``task_id``."""
        if isinstance(self.skill, int | float):
            return float(self.skill)
        try:
            level: int | None = parse_task_id(task_id).difficulty
        except UnknownTaskError:
            level = None
        return float(self.skill.get(level, self.skill.get(None, 0.0)))

    async def start(self, ctx: EpisodeContext) -> None:
        coin = random.Random(derive_seed("skilled-coin", ctx.task_id, ctx.sampling_seed))
        self.followed = coin.random() < self.probability(ctx.task_id)
        env = scripted_env(ctx, "the skilled policy")
        if self.followed and not isinstance(env, SupportsOracle):
            raise UserError(f"{env.spec.id} has no oracle for a skilled policy to follow")
        self._env = env

    async def act(self, observation: Observation) -> PolicyTurn:
        if self.followed:
            assert isinstance(self._env, SupportsOracle)
            return PolicyTurn(await self._env.oracle_action())
        return PolicyTurn(Reply(text=NONSENSE))


def _format_skill(skill: float | Mapping[int | None, float]) -> str:
    if isinstance(skill, int | float):
        return f"{float(skill):g}"
    parts = [f"{k}={v:g}" for k, v in sorted((k, v) for k, v in skill.items() if k is not None)]
    if None in skill:
        parts.append(f"*={skill[None]:g}")
    return ",".join(parts)


def parse_skill(text: str) -> float | dict[int | None, float]:
    """``"0.3"`` or ``"1=0.9,2=0.5,*=0.1"``; UserError on anything else."""
    try:
        if "=" not in text:
            return float(text)
        out: dict[int | None, float] = {}
        for item in text.split(","):
            key, _, value = item.partition("=")
            out[None if key.strip() == "*" else int(key)] = float(value)
        return out
    except ValueError:
        raise UserError(f"bad skill {text!r}: give P or LEVEL=P,...,*=P with P in [0, 1]") from None
