"""The agent's container on the engine: no network but loopback, the task's memory limit,
and nothing of one episode left for the next."""

from __future__ import annotations

import asyncio
from typing import Any

from harbor_helpers import CONTAINERS, DATASET

from gymforge.core.types import ToolCall
from gymforge.registry.resolve import make_env

pytestmark = CONTAINERS


def run(command: str) -> ToolCall:
    return ToolCall(name="run", arguments={"command": command, "timeout": 30})


async def outputs(env: Any, task_id: str, seed: int, commands: list[str]) -> list[str]:
    await env.reset(task_id, seed)
    out = []
    for c in commands:
        r = await env.step(run(c))
        out.append(r.info["tool_result"]["content"]["output"])
    return out


def test_no_network_the_tasks_memory_and_no_state_between_episodes() -> None:
    env = make_env(f"harbor:{DATASET / 'hello-shell'}")
    (task_id,) = env.harbor_tasks  # type: ignore[attr-defined]

    async def go() -> tuple[list[str], list[str]]:
        try:
            first = await outputs(
                env,
                task_id,
                0,
                [
                    "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '",
                    "cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null "
                    "|| cat /sys/fs/cgroup/memory.max",
                    "echo left-behind > /tmp/marker && echo written",
                ],
            )
            second = await outputs(env, task_id, 1, ["cat /tmp/marker 2>&1 || echo absent"])
            return first, second
        finally:
            await env.close()

    first, second = asyncio.run(go())
    assert first[0].split() == ["lo"]
    assert int(first[1].strip()) == 512 << 20  # [environment] memory_mb = 512
    assert first[2].strip() == "written"
    assert "absent" in second[0] and "left-behind" not in second[0]
