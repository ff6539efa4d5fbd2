"""Runner overhead per step, trajectory writing included.

Claim: the runner adds at most 0.5 ms per step on top of the environment and the policy.

Method: a zero-work environment (it returns a fixed observation and ends after K steps)
driven by a zero-latency scripted policy. Three variants in the same run:

- ``bare loop``: reset/step called directly in a loop (the baseline: no records);
- ``runner (memory)``: ``gymforge.rollout.run`` with records built but not written;
- ``runner (jsonl+fsync)``: the full path, validating, digest-chaining and fsyncing per
  episode;
- ``runner (sealed)``: the same with a seal key: an HMAC-SHA256 per record over the bytes
  the digest already covers, and a run seal at the end.

The overhead per step is (runner time - bare time) / steps; the seal's own cost is the
sealed variant against the jsonl one, measured in the same run.
Run: python benchmarks/runner_overhead.py
"""

from __future__ import annotations

import asyncio
import tempfile
import time

from gymforge.core import EnvSpec, Message, Observation, Reply, StepResult
from gymforge.rollout import EpisodeContext, LocalExecutor, PolicyTurn, RunSpec, run

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


async def runner(out_dir: str | None, seal_key: bytes | None = None) -> float:
    jobs = [(f"zero/{i}", i) for i in range(EPISODES)]
    t0 = time.perf_counter()
    result = await run(
        RunSpec(env="zero", policy="zero", jobs=jobs, out=out_dir, seal_key=seal_key),
        LocalExecutor(ZeroEnv, ZeroPolicy),
    )
    assert result.summary["episodes"] == EPISODES
    return time.perf_counter() - t0


def encode_us(records: list[dict], keys: tuple[bytes | None, ...]) -> list[float]:
    """CPU microseconds per record to validate, digest (and seal) one episode's records,
    for each key (None: unsealed): the writer's cost without the disk. Process CPU time,
    not wall time, so other processes on a shared machine do not count; the variants take
    turns, so a change in load hits them alike; best of 7."""
    from gymforge.trajectory.io import _seal_lines
    from gymforge.trajectory.seal import ChainState

    best = [float("inf")] * len(keys)
    for _ in range(7):
        for i, key in enumerate(keys):
            state = ChainState()
            t0 = time.process_time()
            for _ in range(100):
                _seal_lines(records, key, state)
            best[i] = min(best[i], time.process_time() - t0)
    return [b / (100 * len(records)) * 1e6 for b in best]


def main() -> None:
    steps = EPISODES * STEPS_PER_EPISODE
    base = min(asyncio.run(bare()) for _ in range(3))
    mem = min(asyncio.run(runner(None)) for _ in range(3))
    disk = sealed = float("inf")
    for _ in range(3):  # interleaved, so load changes hit both variants alike
        with tempfile.TemporaryDirectory() as tmp:
            disk = min(disk, asyncio.run(runner(tmp)))
        with tempfile.TemporaryDirectory() as tmp:
            sealed = min(sealed, asyncio.run(runner(tmp, b"benchmark seal key")))
    print(f"{steps} steps per variant ({EPISODES} episodes x {STEPS_PER_EPISODE}), best of 3")
    print(f"{'variant':<24}{'us/step':>10}{'overhead us/step':>18}{'x bare':>9}")
    variants = (
        ("bare loop", base),
        ("runner (memory)", mem),
        ("runner (jsonl+fsync)", disk),
        ("runner (sealed)", sealed),
    )
    for name, t in variants:
        print(
            f"{name:<24}{t / steps * 1e6:>10.1f}{(t - base) / steps * 1e6:>18.1f}{t / base:>9.1f}"
        )
    overhead_ms = (disk - base) / steps * 1e3
    verdict = "PASS" if overhead_ms <= 0.5 else "FAIL"
    print(
        f"runner overhead with trajectory writing: {overhead_ms:.3f} ms/step "
        f"(target <= 0.5 ms): {verdict}"
    )
    seal_us = (sealed - disk) / steps * 1e6
    print(f"sealing adds {seal_us:.1f} us/step end to end ({sealed / disk:.2f}x the unsealed run)")
    from gymforge.rollout import EpisodeKeys, run_episode

    ids = {"run_id": "b", "episode_id": "b-0", "task_id": "zero/0", "env_id": "zero"}
    keys = EpisodeKeys(
        **ids, seed=0, env_version="1.0.0", renderer_version="1", policy_checkpoint="zero"
    )
    records = asyncio.run(run_episode(ZeroEnv(), ZeroPolicy(), keys))
    plain, keyed = encode_us(records, (None, b"benchmark seal key"))
    print(
        f"writer CPU per record (validate + encode + digest, no disk): {plain:.1f} us unsealed, "
        f"{keyed:.1f} us sealed (+{keyed - plain:.1f} us, {keyed / plain:.2f}x)"
    )


if __name__ == "__main__":
    main()
