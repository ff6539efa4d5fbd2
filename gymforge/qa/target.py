"""What the QA suite runs against: an environment factory plus its declarations."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gymforge.core.env import Environment, EnvSpec, SupportsOracle
from gymforge.core.episode import Budget
from gymforge.envs.registry import BUILTIN, resolve_factory
from gymforge.qa.profile import QAProfile
from gymforge.tasks.source import TaskSource


@dataclass
class QATarget:
    """``factory`` makes fresh instances; the rest is read once from a probe instance."""

    ref: str
    factory: Callable[[], Environment]
    spec: EnvSpec
    tasks: TaskSource | None
    profile: QAProfile
    budget: Budget | None
    has_oracle: bool
    builtin: bool

    @classmethod
    def load(cls, ref: str) -> QATarget:
        return cls.from_factory(resolve_factory(ref), ref=ref, builtin=ref in BUILTIN)

    @classmethod
    def from_factory(
        cls, factory: Callable[[], Any], ref: str = "", builtin: bool = False
    ) -> QATarget:
        probe = factory()
        try:
            tasks = getattr(probe, "tasks", None)
            profile = getattr(probe, "qa", None)
            budget = getattr(probe, "budget", None)
            return cls(
                ref=ref or probe.spec.id,
                factory=factory,
                spec=probe.spec,
                tasks=tasks if isinstance(tasks, TaskSource) else None,
                profile=profile if isinstance(profile, QAProfile) else QAProfile(),
                budget=budget if isinstance(budget, Budget) else None,
                has_oracle=isinstance(probe, SupportsOracle),
                builtin=builtin,
            )
        finally:
            asyncio.run(probe.close())
