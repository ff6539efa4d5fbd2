"""Runner overhead per step, trajectory writing included.

Claim: the runner adds at most 0.5 ms per step on top of the environment and the policy.

Method: a zero-work environment (it returns a fixed observation and ends after K steps)
driven by a zero-latency scripted policy. Three variants in the same run:

- ``bare loop``: reset/step called directly in a loop (the baseline: no records);
- ``runner (memory)``: ``gymforge.rollout.run`` with records built but not written;
- ``runner (jsonl+fsync)``: the full path, validating, sealing and fsyncing per episode.

The overhead per step is (runner time - bare time) / steps.
Run: python benchmarks/runner_overhead.py
"""

from __future__ import annotations

import asyncio
import tempfile
import time

from gymforge.core import EnvSpec, Message, Observation, Reply, StepResult
from gymforge.rollout import EpisodeContext, PolicyTurn, run

STEPS_PER_EPISODE = 20
EPISODES = 300
OBS = Observation(
    messages=(Message(role="tool", content='{"ok":true,"result":[1,2,3]}'),),
    data={"tool_result": {"ok": True}},
    tokens=12,
)


class ZeroEnv:
    spec = EnvSpec("zero", "1.0.0")

    async def reset(self, task_id: str, seed: int) -> Observation:
        self.t = 0
        return OBS

    async def step(self, action: object) -> StepResult:
        self.t += 1
        done = self.t >= STEPS_PER_EPISODE
        comps = {"step_cost": -0.01, **({"task": 1.0} if done else {})}
        info = {"end_reason": "verdict", "success": True} if done else {}
        return StepResult.make(OBS, comps, terminated=done, info=info)

    async def snapshot(self) -> dict[str, int]:
        return {"t": self.t}

    async def close(self) -> None:
        return None


class ZeroPolicy:
    name = checkpoint = "zero"
    turn = PolicyTurn(Reply(text="ok"))

    async def start(self, ctx: EpisodeContext) -> None:
        return None

    async def act(self, observation: Observation) -> PolicyTurn:
        return self.turn


async def bare() -> float:
    env, pol = ZeroEnv(), ZeroPolicy()
    t0 = time.perf_counter()
    for i in range(EPISODES):
        obs = await env.reset(f"zero/{i}", i)
        while True:
            r = await env.step((await pol.act(obs)).action)
            await env.snapshot()
            if r.terminated:
                break
    return time.perf_counter() - t0


async def runner(out_dir: str | None) -> float:
    jobs = [(f"zero/{i}", i) for i in range(EPISODES)]
    t0 = time.perf_counter()
    result = await run(ZeroEnv, ZeroPolicy, jobs, out_dir)
    assert result.summary["episodes"] == EPISODES
    return time.perf_counter() - t0


def main() -> None:
    steps = EPISODES * STEPS_PER_EPISODE
    base = min(asyncio.run(bare()) for _ in range(3))
    mem = min(asyncio.run(runner(None)) for _ in range(3))
    with tempfile.TemporaryDirectory() as tmp:
        disk = min(asyncio.run(runner(tmp)) for _ in range(3))
    print(f"{steps} steps per variant ({EPISODES} episodes x {STEPS_PER_EPISODE}), best of 3")
    print(f"{'variant':<24}{'us/step':>10}{'overhead us/step':>18}{'x bare':>9}")
    for name, t in (("bare loop", base), ("runner (memory)", mem), ("runner (jsonl+fsync)", disk)):
        print(
            f"{name:<24}{t / steps * 1e6:>10.1f}{(t - base) / steps * 1e6:>18.1f}{t / base:>9.1f}"
        )
    overhead_ms = (disk - base) / steps * 1e3
    verdict = "PASS" if overhead_ms <= 0.5 else "FAIL"
    print(
        f"runner overhead with trajectory writing: {overhead_ms:.3f} ms/step "
        f"(target <= 0.5 ms): {verdict}"
    )


if __name__ == "__main__":
    main()
