"""Shared helpers for the swe tests: play a list of actions, read tool results."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from gymforge.core.env import StepResult
from gymforge.core.types import Action, Reply, ToolCall
from gymforge.envs.swe import SweEnv


def call(name: str, **args: Any) -> ToolCall:
    return ToolCall(name=name, arguments=args)


def result(step: StepResult) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(step.observation.messages[-1].content)
    return out


def play(tid: str, actions: list[Action], seed: int = 0) -> tuple[SweEnv, list[StepResult]]:
    """Reset ``tid`` and play ``actions`` (a final reply is added if none ends the episode)."""

    async def go() -> tuple[SweEnv, list[StepResult]]:
        env = SweEnv()
        await env.reset(tid, seed)
        steps = []
        for a in actions:
            steps.append(await env.step(a))
            if steps[-1].done:
                return env, steps
        steps.append(await env.step(Reply(text="done")))
        return env, steps

    return asyncio.run(go())


def oracle(tid: str) -> list[Action]:
    env = SweEnv()
    return list(env.oracle_plan(env.tasks.resolve(tid)) or [])


def verdict(steps: list[StepResult]) -> dict[str, Any]:
    v: dict[str, Any] = steps[-1].info["verdict"]
    return v
