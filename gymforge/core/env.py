"""The environment contract. This file is authoritative; everything else follows it.

An ``Environment`` runs one episode at a time::

    obs = await env.reset(task_id, seed)      # start (or restart) an episode
    while True:
        result = await env.step(action)       # one agent action -> StepResult
        if result.terminated or result.truncated:
            break
    state = await env.snapshot()              # JSON world state, any time after reset
    await env.close()                         # release resources; the env is then unusable

Rules every environment obeys (``gymforge qa`` checks each):

1. Same ``(task_id, seed)`` and same actions give identical observations, rewards, ``info``
   and state fingerprints. All randomness comes from ``gymforge.core.seeding`` streams.
2. ``reset`` isolates episodes: the state after ``reset(task_id, seed)`` depends on
   ``(task_id, seed)`` only, never on earlier episodes.
3. ``reset`` needs nothing but the task id: the environment resolves or regenerates the task.
4. Bad input never raises out of ``step``: malformed output, unknown tools, bad arguments and
   crashing tools each become an observation, a penalty or termination.
5. ``terminated`` and ``truncated`` are never both True; budgets truncate, tasks terminate.
6. ``reward == sum(reward_components.values())``; verifiers report facts, rewards are named.
7. ``info`` holds deterministic facts; wall-clock figures go in ``timing``, which replay and
   the determinism checks ignore.

Calling ``step`` before ``reset`` or after the episode ended raises ``EpisodeStateError``:
that is a caller bug, not agent input.
"""

from __future__ import annotations

import asyncio
import math
import re
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeGuard, runtime_checkable

from gymforge.core.built import dataclass_made
from gymforge.core.types import Action, Observation, State

_SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:[-+][0-9A-Za-z.-]+)?")


@dataclass(frozen=True)
class EnvSpec:
    """Identity of an environment. Bump ``version`` when dynamics, tasks or verifiers change
    and ``renderer_version`` when only the rendering of observations changes."""

    id: str
    version: str
    renderer_version: str = "1"
    description: str = ""

    def __post_init__(self) -> None:
        if not _SEMVER.fullmatch(self.version):
            raise ValueError(
                f"EnvSpec.version must be semver (MAJOR.MINOR.PATCH), got {self.version!r}"
            )


_NUMBERS = frozenset({float, int})
"""Component types whose value ``fsum`` reads the same every time (no ``__float__`` of
their own)."""


@dataclass(frozen=True)
class StepResult:
    """The outcome of one ``step``. Build it with :meth:`make` so that ``reward`` is the sum."""

    observation: Observation
    reward: float
    reward_components: dict[str, float]
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)
    timing: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.terminated and self.truncated:
            raise ValueError("a step cannot be both terminated and truncated")
        total = math.fsum(self.reward_components.values())
        if self.reward != total:
            raise ValueError(f"reward {self.reward} != sum of components {total}")

    @classmethod
    def make(
        cls,
        observation: Observation,
        components: dict[str, float],
        *,
        terminated: bool = False,
        truncated: bool = False,
        info: dict[str, Any] | None = None,
        timing: dict[str, float] | None = None,
    ) -> StepResult:
        """The result whose ``reward`` is the sum of ``components`` (a copy). A
        ``StepResult`` of a plain dict's components that ``__post_init__`` accepts is made
        as ``__init__`` makes it, without checking the sum again
        (``tests/test_dataclass_made.py`` holds it equal to the constructor)."""
        reward = math.fsum(components.values())
        # NaN, or both ends: ``__post_init__`` refuses it, so the constructor raises; a value
        # not exactly a float or an int (or an end flag not a bool) may read otherwise the
        # second time: the constructor
        if (
            cls is StepResult
            and type(components) is dict
            and set(map(type, components.values())) <= _NUMBERS
            and reward == reward
            and type(terminated) is bool
            and type(truncated) is bool
            and not (terminated and truncated)
        ):
            made = {
                "observation": observation,
                "reward": reward,
                "reward_components": dict(components),
                "terminated": terminated,
                "truncated": truncated,
                "info": info or {},
                "timing": timing or {},
            }
            return dataclass_made(StepResult, made)
        return cls(
            observation,
            reward,
            dict(components),
            terminated,
            truncated,
            info or {},
            timing or {},
        )

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated


@runtime_checkable
class Environment(Protocol):
    """The async contract. See the module docstring for the rules.

    ``spec`` is a read-only property here so that a class attribute (``spec = EnvSpec(...)``
    on the class, the usual case), an instance attribute or a property each satisfy it."""

    @property
    def spec(self) -> EnvSpec: ...

    async def reset(self, task_id: str, seed: int) -> Observation: ...

    async def step(self, action: Action) -> StepResult: ...

    async def snapshot(self) -> State: ...

    async def close(self) -> None: ...


@runtime_checkable
class SupportsOracle(Protocol):
    """An environment that can name the next action of a reference solution.

    ``oracle_action`` reads the hidden task and current state, so only scripted baselines and
    QA may call it; it adapts to what happened (a retried timeout, say)."""

    async def oracle_action(self) -> Action: ...


def has_oracle(env: object) -> TypeGuard[SupportsOracle]:
    """``isinstance(env, SupportsOracle)``, answered from the class when the class defines
    ``oracle_action`` (the usual case): a runtime protocol check walks the protocol's
    attributes on every call (~20 us), and the oracle policy asks once per episode."""
    for base in env.__class__.__mro__:
        if "oracle_action" in base.__dict__:
            if base.__dict__["oracle_action"] is not None:
                return True  # what the protocol's subclass hook concludes from the class
            break
    return isinstance(env, SupportsOracle)


class SyncEnvironment:
    """A blocking facade over an async ``Environment``, for notebooks and simple loops.

    It owns a private event loop; do not use it from inside a running loop.
    """

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.spec = env.spec
        self._runner = asyncio.Runner()

    def reset(self, task_id: str, seed: int) -> Observation:
        return self._runner.run(self.env.reset(task_id, seed))

    def step(self, action: Action) -> StepResult:
        return self._runner.run(self.env.step(action))

    def snapshot(self) -> State:
        return self._runner.run(self.env.snapshot())

    def close(self) -> None:
        try:
            self._runner.run(self.env.close())
        finally:
            self._runner.close()

    def __enter__(self) -> SyncEnvironment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
