"""The counterfactual behind a declared side-effecting error.

A tool may declare that errors of some kind can leave its call applied
(``Tool.error_effects``, such as ``world_write``'s timeout after the commit). Such an error may
leave the state unchanged, or exactly as the same call would have left it had it succeeded;
anything else (half a write behind a timeout) is a defect. ``succeeded`` builds that
counterfactual: a fresh instance from the target's factory, ``reset(task_id, seed)``, the
episode's earlier actions replayed (under the same fault plan), then the same call with every
fault switched off. It runs only for declared-kind errors that changed the state, so it costs
nothing on honest refusals.

The comparison leaves out a world's system tables (``_``-prefixed, such as
``_idempotency``): they record what the agent was told (a timed-out write's key is stored
unacknowledged), not what the call did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gymforge.core.capabilities import TOOLSET, WRITES, supported
from gymforge.core.types import Action, ToolCall
from gymforge.qa.checks.common import plain
from gymforge.qa.target import QATarget
from gymforge.tools.faults import NO_FAULTS, FaultPlan
from gymforge.world.writes import NO_WORLD_FAULTS, WorldFaults, WriteGuard


@dataclass(frozen=True)
class Prefix:
    """Where a call happened: the episode's task, seed and the actions before the call, and
    the toolset fault plan and world faults they ran under (``None``: the environment's own)."""

    target: QATarget
    task_id: str
    seed: int
    history: Sequence[Action]
    plan: FaultPlan | None = None
    world: WorldFaults | None = None


def set_world_faults(env: object, faults: WorldFaults) -> bool:
    """Replace a world's faults for the rest of the episode; False when ``env`` has none."""
    found = supported(env, WRITES)
    writes = found.writes if found is not None else None
    if not isinstance(writes, WriteGuard):
        return False
    writes.faults = faults
    return True


def commit_timeouts(tools: Sequence[str]) -> WorldFaults:
    """World faults under which every write of ``tools`` is applied, then times out."""
    return WorldFaults(forced=tuple((n, i, "commit_timeout") for n in tools for i in range(64)))


def faults_off(env: object) -> None:
    """Switch off every fault source QA knows for the next calls: the toolset's fault plan
    and a world's ``WriteGuard`` faults (commit timeouts, rate limits)."""
    found = supported(env, TOOLSET)
    if found is not None:
        found.toolset.set_fault_plan(NO_FAULTS)
    set_world_faults(env, NO_WORLD_FAULTS)


async def replay(prefix: Prefix, call: ToolCall, faults: bool = True) -> tuple[Any, Any]:
    """The state before and after ``call`` in a fresh instance that replayed ``prefix``,
    with the faults of the call itself on or off. Snapshots are copied out as plain JSON."""
    env = prefix.target.factory()
    try:
        await env.reset(prefix.task_id, prefix.seed)
        found = supported(env, TOOLSET)
        if prefix.plan is not None and found is not None:
            found.toolset.set_fault_plan(prefix.plan)
        if prefix.world is not None:
            set_world_faults(env, prefix.world)
        for action in prefix.history:
            await env.step(action)
        before = plain(await env.snapshot())
        if not faults:
            faults_off(env)
        await env.step(call)
        return before, plain(await env.snapshot())
    finally:
        await env.close()


async def succeeded(prefix: Prefix, call: ToolCall) -> tuple[Any, Any]:
    """The pre-call state as replayed, and the state the call leaves with faults off."""
    return await replay(prefix, call, faults=False)


def effect_view(state: Any) -> Any:
    """``state`` without the system tables of any world snapshot in it (a mapping with a
    ``template`` digest and its ``tables``), for comparing a call's effect."""
    if isinstance(state, dict):
        out = {k: effect_view(v) for k, v in state.items()}
        tables = out.get("tables")
        if "template" in out and isinstance(tables, dict):
            out["tables"] = {k: v for k, v in tables.items() if not str(k).startswith("_")}
        return out
    if isinstance(state, list):
        return [effect_view(v) for v in state]
    return state
