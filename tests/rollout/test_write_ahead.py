"""A worker plays on while its finished episodes are written (``runner.WRITE_AHEAD``): the
episodes finishing during one fsync share the next, yet each counts as finished
(``on_episode``, the summary) only once it is on disk, in the order played, and an episode
the writer refuses still stops the run with the writer's error, leaving no trace (episodes
handed over after it may be on disk, whole and uncounted, as after any stop)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from gymforge.core import EnvSpec, Message, Observation, Reply, StepResult
from gymforge.core.errors import IntegrityError
from gymforge.rollout import EpisodeContext, LocalExecutor, PolicyTurn, RunSpec, run
from gymforge.rollout.capture import CapturedTurn
from gymforge.rollout.runner import WRITE_AHEAD
from gymforge.trajectory.io import TrajectoryWriter, read_episodes, verify_chain

OBS = Observation(messages=(Message(role="user", content="go"),), data={}, tokens=1)


class TwoStepEnv:
    spec = EnvSpec("two", "1.0.0")

    async def reset(self, task_id: str, seed: int) -> Observation:
        self.t = 0
        return OBS

    async def step(self, action: object) -> StepResult:
        self.t += 1
        done = self.t >= 2
        return StepResult.make(OBS, {"task": 1.0 if done else 0.0}, terminated=done)

    async def snapshot(self) -> dict[str, int]:
        return {"t": self.t}

    async def close(self) -> None:
        return None


class Policy:
    """Says ok; on task ``two/bad`` its capture holds a NaN logprob, which the writer refuses."""

    name = checkpoint = "ok"

    async def start(self, ctx: EpisodeContext) -> None:
        self.bad = ctx.task_id == "two/bad"

    async def act(self, observation: Observation) -> PolicyTurn:
        if self.bad:
            return CapturedTurn(Reply(text="ok"), "logprobs", "ok", logprobs=[float("nan")])
        return PolicyTurn(Reply(text="ok"))


def _slow_fsync(monkeypatch: pytest.MonkeyPatch, calls: list[int]) -> None:
    """Each write takes 100 ms (as an fsync on a busy disk can): episodes pile up behind it.
    Playing one of these episodes takes a few milliseconds at most, so at least one finishes
    during a write even on a machine loaded many times over."""
    write_lines = TrajectoryWriter.write_lines

    def slow(self: TrajectoryWriter, lines: list[str]) -> None:
        time.sleep(0.1)
        calls.append(len(lines))
        write_lines(self, lines)

    monkeypatch.setattr(TrajectoryWriter, "write_lines", slow)


def test_episodes_share_an_fsync_and_count_only_once_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    _slow_fsync(monkeypatch, calls)
    path = tmp_path / "trajectories.jsonl"
    seen: list[str] = []

    def on_episode(rec: dict[str, Any]) -> None:
        on_disk = [json.loads(line) for line in path.read_text().splitlines()]
        assert rec["episode_id"] in {r["episode_id"] for r in on_disk if r["record"] == "episode"}
        seen.append(rec["task_id"])

    jobs = [(f"two/{i}", i) for i in range(12)]
    spec = RunSpec(env="two", policy="ok", jobs=jobs, out=tmp_path, concurrency=1)
    result = asyncio.run(run(spec, LocalExecutor(TwoStepEnv, Policy), on_episode=on_episode))
    assert result.summary["episodes"] == 12 and not result.errors
    assert seen == [task for task, _ in jobs]  # in the order played
    assert len(calls) < 12  # the episodes finishing during one fsync shared the next
    episodes = read_episodes(path)
    assert [e.end.task_id for e in episodes if e.end] == seen
    for log in episodes:
        verify_chain(log)


def test_a_refused_episode_stops_the_run_and_leaves_no_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _slow_fsync(monkeypatch, [])
    jobs = [("two/0", 0), ("two/1", 1), ("two/bad", 2)] + [(f"two/{i}", i) for i in range(3, 20)]
    spec = RunSpec(env="two", policy="ok", jobs=jobs, out=tmp_path, concurrency=1)
    seen: list[str] = []
    with pytest.raises(IntegrityError, match="is not JSON"):
        asyncio.run(
            run(
                spec,
                LocalExecutor(TwoStepEnv, Policy),
                on_episode=lambda r: seen.append(r["task_id"]),
            )
        )
    episodes = read_episodes(tmp_path / "trajectories.jsonl")
    written = [e.end.task_id for e in episodes if e.end]
    assert "two/bad" not in written and written[:2] == ["two/0", "two/1"]
    # counted in the order played, up to the refused one; episodes the worker had handed
    # over after it may be on disk, whole but uncounted, as after any stop
    assert seen == ["two/0", "two/1"]
    assert len(written) <= 2 + WRITE_AHEAD
    for log in episodes:
        verify_chain(log)
