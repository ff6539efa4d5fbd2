"""truncation_accounting: budget ends are ``truncated``, never ``terminated``.

A staller policy that never finishes (it keeps calling a read-only tool that does not end
the episode, or, without tools, sends a reply larger than the token budget) must end every
episode truncated, with an ``end_reason`` naming the budget, no success and no positive
``task`` reward; and what the stalled episodes *earned* (every positive component total,
costs left out: ``scripted_baselines.earned``) must stay within ``baselines.noop_reward_max``
(default 0: stalling does nothing). An ``effort`` bonus paid to a reply the token budget
cut off, never judged, earned 0.3 on every task while only ``task`` was read. Across
ordinary episodes too, no step may set both flags, and the episode record must carry the
last step's flags.

What it cannot catch: budgets the environment enforces outside ``Budget`` (its own step
caps or wall-clock limits), and pay for a budget end that the staller's way of stalling
(one harmless read repeated, or one reply far over the token budget) does not reach.
"""

from __future__ import annotations

from typing import Any

from gymforge.core.capabilities import TOOLSET, supported
from gymforge.core.episode import TRUNCATION_REASONS
from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Observation, Reply, ToolCall
from gymforge.qa.checks.common import (
    CheckFailed,
    NothingToTest,
    QAOptions,
    jobs,
    play_many,
    run_async,
)
from gymforge.qa.checks.scripted_baselines import earned
from gymforge.qa.target import QATarget

NAME = "truncation_accounting"


class Staller:
    """Never finishes: repeats a harmless read, or overruns the token budget in one reply."""

    name = checkpoint = "staller"

    def __init__(self, read_tools: set[str], max_tokens: int | None) -> None:
        self.read_tools = read_tools
        self.max_tokens = max_tokens

    async def start(self, ctx: EpisodeContext) -> None:
        self.call: ToolCall | None = None

    async def act(self, observation: Observation) -> PolicyTurn:
        if self.call is None and observation.tools:
            for schema in observation.tools:
                fn = schema["function"]
                if fn["name"] in self.read_tools:
                    props = fn["parameters"].get("properties", {})
                    args = {
                        p: {"integer": 0, "number": 0.0, "boolean": False}.get(
                            s.get("type", ""), "x"
                        )
                        for p, s in props.items()
                    }
                    self.call = ToolCall(name=fn["name"], arguments=args)
                    break
        if self.call is not None:
            return PolicyTurn(self.call)
        assert self.max_tokens is not None
        return PolicyTurn(Reply(text="z " * (self.max_tokens * 8)))


def _read_tools(target: QATarget) -> set[str]:
    env = target.factory()
    found = supported(env, TOOLSET)
    tools = found.toolset.tools if found is not None else {}
    return {name for name, t in tools.items() if not (t.writes or t.ends_episode)}


def _flags_consistent(episodes: list[list[dict[str, Any]]]) -> int:
    steps = 0
    for e in episodes:
        for rec in e[:-1]:
            steps += 1
            if rec["terminated"] and rec["truncated"]:
                raise CheckFailed(f"{rec['task_id']} step {rec['step']}: both flags set")
        last, end = e[-2], e[-1]
        if (end["terminated"], end["truncated"]) != (last["terminated"], last["truncated"]):
            raise CheckFailed(
                f"{end['task_id']}: the episode record's flags differ from its last step's"
            )
        if not (end["terminated"] or end["truncated"]):
            raise CheckFailed(f"{end['task_id']}: the episode ended with neither flag set")
    return steps


def run(target: QATarget, opts: QAOptions) -> tuple[str, dict[str, Any]]:
    reads = _read_tools(target)
    max_tokens = target.budget.max_tokens if target.budget else None
    if not reads and max_tokens is None:
        raise NothingToTest(
            "no read-only tool to stall with and no token budget to overrun (an MCP tool "
            "without readOnlyHint is a read when the environment declares it: "
            "McpToolset(connection, read_only=[...]))"
        )
    pairs = jobs(target, max(4, opts.episodes // 4), opts.seed + 5, "all")
    stalled = run_async(play_many(target, lambda: Staller(reads, max_tokens), pairs))
    for e in stalled:
        end = e[-1]
        last = e[-2]
        if not end["truncated"] or end["terminated"]:
            raise CheckFailed(
                f"{end['task_id']}: a budget end was reported as terminated="
                f"{end['terminated']}, truncated={end['truncated']} "
                f"(end_reason {last['info'].get('end_reason')!r})"
            )
        if last["info"].get("end_reason") not in TRUNCATION_REASONS:
            raise CheckFailed(
                f"{end['task_id']}: truncated with end_reason "
                f"{last['info'].get('end_reason')!r}, not a budget"
            )
        if end["success"] or end["reward_components"].get("task", 0.0) > 0:
            raise CheckFailed(f"{end['task_id']}: a truncated episode was rewarded as a success")
    ceiling = target.profile.baselines.noop_reward_max
    paid = sum(earned(e) for e in stalled) / len(stalled)
    if paid > ceiling + 1e-9:
        parts = sorted({k for e in stalled for k, v in e[-1]["reward_components"].items() if v > 0})
        raise CheckFailed(
            f"the stalled episodes earned {paid:.3f} beyond costs on average (components: "
            f"{', '.join(parts)}) > baselines.noop_reward_max {ceiling}: a budget end, "
            "reached by doing nothing, must not pay"
        )
    others = run_async(play_many(target, "random", pairs))
    steps = _flags_consistent(stalled + others)
    reasons = sorted({e[-2]["info"]["end_reason"] for e in stalled})
    metrics = {
        "stalled_episodes": len(stalled),
        "steps_checked": steps,
        "reasons": reasons,
        "stalled_mean_earned": paid,
    }
    return (
        f"{len(stalled)} stalled episodes all truncated ({', '.join(reasons)}), never "
        f"terminated; flags consistent over {steps} steps",
        metrics,
    )
