"""Deliberately broken environments: each is ``LedgerEnv`` with exactly one defect.

``EXPECTED`` maps each to the QA check that must flag it. ``SUBTLE`` holds defects that
only show in later dynamics or deep inside records, which earlier versions of the checks
missed; each has its own test. All are
importable as ``tests.qa.broken_envs:<Name>`` from the repository root, so the CLI can be
pointed at them too.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from gymforge.core.env import StepResult
from gymforge.core.types import Action, Invalid, Task, ToolCall
from gymforge.envs.ledger import LedgerEnv
from gymforge.envs.ledger.env import FAMILY, Transfer, World
from gymforge.tasks import Split, TaskSource
from gymforge.tasks.source import SplitName
from gymforge.tools import tool
from gymforge.verify import Verdict

HELD_OUT = Split(regions={"ledger.transfer": {"three_transfers": lambda p: p["transfers"] == 3}})


class NondeterministicEnv(LedgerEnv):
    """Defect: ``transfer`` draws the transfer id from ``os.urandom``, not a seeded stream,
    so the same seed and actions give a different tool result and state on every run."""

    @tool(writes=True)
    def transfer(self, from_account: str, to_account: str, amount_cents: int) -> Transfer:
        """Move money between two accounts.

        Args:
            from_account: Account id to debit.
            to_account: Account id to credit.
            amount_cents: Amount in cents, greater than zero.
        """
        done = LedgerEnv.transfer(self, from_account, to_account, amount_cents)
        done.transfer_id = f"T{os.urandom(6).hex()}"  # the same object as in world.transfers
        return done


class LeakyEnv(LedgerEnv):
    """Defect: an audit log of every transfer ever made lives on the instance, survives
    ``reset`` and is part of ``state()``: a reused instance's state depends on its past."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.audit: list[dict[str, Any]] = []

    @tool(writes=True)
    def transfer(self, from_account: str, to_account: str, amount_cents: int) -> Transfer:
        """Move money between two accounts.

        Args:
            from_account: Account id to debit.
            to_account: Account id to credit.
            amount_cents: Amount in cents, greater than zero.
        """
        done = LedgerEnv.transfer(self, from_account, to_account, amount_cents)
        self.audit.append(done.model_dump(mode="json"))
        return done

    def state(self) -> dict[str, Any]:
        return {**super().state(), "audit": list(self.audit)}


class HackableVerifierEnv(LedgerEnv):
    """Defect: the verifier believes the reply: any reply claiming success ("done",
    "success", "complete") passes, whatever the world state."""

    def verify(self, task: Task, world: World, reply: str) -> Verdict:
        if any(word in reply.lower() for word in ("done", "success", "complete")):
            return Verdict(passed=True, verifier="ledger.claims@0")
        return super().verify(task, world, reply)


class TruncationAsTerminationEnv(LedgerEnv):
    """Defect: a spent step budget is reported as ``terminated`` instead of ``truncated``."""

    async def step(self, action: Action) -> StepResult:
        result = await super().step(action)
        if not result.truncated:
            return result
        return StepResult.make(
            result.observation,
            result.reward_components,
            terminated=True,
            truncated=False,
            info=result.info,
            timing=result.timing,
        )


class CrashOnBadInputEnv(LedgerEnv):
    """Defect: ``step`` raises on unparseable output and on unknown tool names instead of
    turning them into an observation or a penalty."""

    async def step(self, action: Action) -> StepResult:
        if isinstance(action, Invalid):
            raise ValueError(f"cannot parse model output: {action.error[:100]}")
        if isinstance(action, ToolCall) and action.name not in self.toolset.tools:
            raise KeyError(action.name[:100])
        return await super().step(action)


class LeakyTaskSource(TaskSource):
    """``sample(..., "train")`` forgets the split and draws from every task."""

    def sample(
        self, n: int, seed: int, split: SplitName = "train", difficulties: Any = None
    ) -> list[str]:
        return super().sample(n, seed, "all" if split == "train" else split, difficulties)


class HeldoutLeakEnv(LedgerEnv):
    """Defect: it declares a held-out region (three transfers), and ``resolve`` marks those
    tasks held-out, but training sampling ignores the split, so they reach training."""

    tasks = LeakyTaskSource.of([FAMILY], HELD_OUT)


class SchemaBreakingEnv(LedgerEnv):
    """Defect: the observation closing a *successful* episode reports ``tokens=-1`` (a
    counter that subtracts a phantom end-of-turn token); the trajectory schema forbids it.
    Failed episodes are untouched, so fuzzing, baselines and red-teaming do not notice."""

    async def step(self, action: Action) -> StepResult:
        result = await super().step(action)
        if not result.info.get("success"):
            return result
        obs = result.observation.model_copy(update={"tokens": -1})
        return dataclasses.replace(result, observation=obs)


EXPECTED: dict[type[LedgerEnv], str] = {
    NondeterministicEnv: "replay_determinism",
    LeakyEnv: "reset_isolation",
    HackableVerifierEnv: "verifier_redteam",
    TruncationAsTerminationEnv: "truncation_accounting",
    CrashOnBadInputEnv: "error_paths",
    HeldoutLeakEnv: "heldout_exclusion",
    SchemaBreakingEnv: "trajectory_schema",
}
"""Each broken environment and the one check that must flag it."""


# ---- subtle defects, once missed by the suite (own tests in test_broken_envs.py) ---------
class CounterLeakEnv(LedgerEnv):
    """Defect: transfer ids come from an instance counter that ``reset`` never clears, so the
    same (task, seed, actions) give ``T1`` on a fresh instance and ``T2`` on a reused one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.made = 0

    @tool(writes=True)
    def transfer(self, from_account: str, to_account: str, amount_cents: int) -> Transfer:
        """Move money between two accounts.

        Args:
            from_account: Account id to debit.
            to_account: Account id to credit.
            amount_cents: Amount in cents, greater than zero.
        """
        done = LedgerEnv.transfer(self, from_account, to_account, amount_cents)
        self.made += 1
        done.transfer_id = f"T{self.made}"
        return done


class NaNInfoEnv(LedgerEnv):
    """Defect: every step puts a NaN (not JSON) into ``info``."""

    async def step(self, action: Action) -> StepResult:
        result = await super().step(action)
        return dataclasses.replace(result, info={**result.info, "confidence": float("nan")})


SUBTLE: dict[type[LedgerEnv], str] = {
    CounterLeakEnv: "reset_isolation",
    NaNInfoEnv: "trajectory_schema",
}
