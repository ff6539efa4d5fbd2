"""Shared machinery of the QA checks: results, options, and playing scripted episodes
(``CheckFailed``, ``first_difference`` and ``short`` live in ``gymforge.qa.findings``, which
the episodes every check plays use too; they are re-exported here)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gymforge.core.policy import Policy
from gymforge.core.seeding import canonical_json, derive_seed
from gymforge.qa.episodes import play
from gymforge.qa.findings import CheckFailed as CheckFailed  # re-exported
from gymforge.qa.findings import first_difference as first_difference  # re-exported
from gymforge.qa.findings import short as short  # re-exported
from gymforge.qa.target import QATarget
from gymforge.rollout.scripted import scripted_policy


class NothingToTest(Exception):
    """The check found nothing to exercise; it fails with this reason."""


@dataclass
class QAOptions:
    episodes: int = 24
    seed: int = 0
    policy: str | None = None
    fuzz_examples: int = 40


@dataclass
class CheckResult:
    name: str
    passed: bool
    details: str
    seconds: float = 0.0
    applicable: bool = True
    metrics: dict[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> str:
        """``pass``, ``fail``, or ``not_applicable`` (declared so, with the reason in
        ``details``: it ran nothing, so it proves nothing)."""
        if not self.applicable:
            return "not_applicable"
        return "pass" if self.passed else "fail"

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "status": self.status,
            "passed": self.passed,
            "details": self.details,
            "seconds": round(self.seconds, 3),
            "applicable": self.applicable,
        }
        if self.metrics:
            out["metrics"] = self.metrics
        return out


Check = Callable[[QATarget, QAOptions], CheckResult]


def need_tasks(target: QATarget) -> Any:
    if target.tasks is None:
        raise NothingToTest("the environment exposes no TaskSource (`tasks`) to draw tasks from")
    return target.tasks


def need_oracle(target: QATarget) -> None:
    if not target.has_oracle:
        raise NothingToTest("the environment has no oracle (oracle_action) for a known-good run")


def jobs(target: QATarget, n: int, seed: int, split: str = "all") -> list[tuple[str, int]]:
    """``n`` (task_id, episode seed) pairs; episode seeds differ from task seeds."""
    ids = need_tasks(target).sample(n, seed, split)
    return [(task_id, derive_seed("qa-episode", task_id, seed) % 2**31) for task_id in ids]


async def play_many(
    target: QATarget, policy_name: str | Callable[[], Policy], pairs: Sequence[tuple[str, int]]
) -> list[list[dict[str, Any]]]:
    """Play every pair on one reused environment instance (reuse is part of the contract)."""
    make = scripted_policy(policy_name) if isinstance(policy_name, str) else policy_name
    env = target.factory()
    try:
        return [await play(env, make(), task_id, seed) for task_id, seed in pairs]
    finally:
        await env.close()


def success_rate(episodes: Sequence[Sequence[dict[str, Any]]]) -> float:
    return sum(bool(e[-1]["success"]) for e in episodes) / max(1, len(episodes))


def timed(
    name: str,
    check: Callable[[QATarget, QAOptions], tuple[str, dict[str, Any]]],
    target: QATarget,
    opts: QAOptions,
) -> CheckResult:
    """Run ``check`` (which returns (details, metrics) or raises) into a CheckResult."""
    t0 = time.perf_counter()
    try:
        details, metrics = check(target, opts)
        passed = True
    except NothingToTest as e:
        details, metrics, passed = f"nothing to test: {e}", {}, False
    except CheckFailed as e:
        details, metrics, passed = str(e), e.metrics, False
    except Exception as e:  # a crash inside the environment is a finding, not a QA bug
        details, metrics, passed = f"crashed: {type(e).__name__}: {str(e)[:500]}", {}, False
    return CheckResult(name, passed, details, time.perf_counter() - t0, metrics=metrics)


def run_async(coro: Any) -> Any:
    return asyncio.run(coro)


def plain(value: Any) -> Any:
    """``value`` as the JSON a trajectory file would hold: a deep copy, canonical types
    (a snapshot may share lists with the live world that a later step mutates)."""
    return json.loads(canonical_json(value))
