"""Replay: re-run recorded episodes from ``(task_id, seed, actions)`` and compare.

For every episode the digest chain is verified first; then the environment is reset and each
recorded action is stepped again. Every step's observation, reward, reward components,
flags, ``info`` and state fingerprint must equal the record. ``timing``, ``timestamp`` and
the ids are run-specific and ignored. The first divergence is reported.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from gymforge.core.env import Environment
from gymforge.core.seeding import canonical_json, fingerprint
from gymforge.core.types import Action
from gymforge.rollout.episode import reset_outcome, step_outcome
from gymforge.trajectory.io import EpisodeLog, read_episodes, verify_chain

COMPARED = (
    "observation",
    "tool_result",
    "reward",
    "reward_components",
    "terminated",
    "truncated",
    "info",
    "state_fingerprint",
)
ACTION_ADAPTER: TypeAdapter[Action] = TypeAdapter(Action)


@dataclass(frozen=True)
class Divergence:
    episode_id: str
    task_id: str
    seed: int
    step: int
    field: str
    recorded: Any
    replayed: Any

    def describe(self) -> str:
        return (
            f"episode {self.episode_id} ({self.task_id}, seed {self.seed}) diverges at "
            f"step {self.step}, field {self.field!r}:\n  recorded: {_short(self.recorded)}\n"
            f"  replayed: {_short(self.replayed)}"
        )


@dataclass
class ReplayReport:
    episodes: int = 0
    steps: int = 0
    divergence: Divergence | None = None

    @property
    def ok(self) -> bool:
        return self.divergence is None


def _short(value: Any, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _first_difference(recorded: dict[str, Any], replayed: dict[str, Any]) -> str | None:
    for name in COMPARED:
        if recorded.get(name) != replayed.get(name):
            return name
    return None


async def replay_episode(env: Environment, log: EpisodeLog) -> tuple[int, Divergence | None]:
    """Replay one verified episode on ``env``; return (steps replayed, first divergence)."""
    first = log.steps[0]
    if env.spec.version != first.env_version:
        return 0, Divergence(
            log.episode_id,
            first.task_id,
            first.seed,
            0,
            "env_version",
            first.env_version,
            env.spec.version,
        )
    obs = await env.reset(first.task_id, first.seed)
    replayed = reset_outcome(obs, fingerprint(await env.snapshot()))
    for i, raw in enumerate(log.raw[: len(log.steps)]):
        if i > 0:
            try:
                result = await env.step(ACTION_ADAPTER.validate_python(raw["action"]))
            except Exception as err:
                return i, Divergence(
                    log.episode_id,
                    first.task_id,
                    first.seed,
                    i,
                    "step",
                    "a step result",
                    f"{type(err).__name__}: {err}",
                )
            replayed = step_outcome(result, fingerprint(await env.snapshot()))
        replayed = json.loads(canonical_json(replayed))
        name = _first_difference(raw, replayed)
        if name is not None:
            return i, Divergence(
                log.episode_id,
                first.task_id,
                first.seed,
                i,
                name,
                raw.get(name),
                replayed.get(name),
            )
    return len(log.steps), None


async def replay_file(path: str | Path, env_factory: Callable[[str], Environment]) -> ReplayReport:
    """Verify and replay every episode of a trajectory file. ``env_factory(env_id)`` makes
    the environment. Integrity errors raise ``IntegrityError``; divergences are reported."""
    return await replay_episodes(read_episodes(path), env_factory)


async def replay_episodes(
    episodes: list[EpisodeLog], env_factory: Callable[[str], Environment]
) -> ReplayReport:
    """``replay_file`` for episodes already read."""
    report = ReplayReport()
    envs: dict[str, Environment] = {}
    try:
        for log in episodes:
            verify_chain(log)
            env_id = log.steps[0].env_id
            env = envs.get(env_id) or envs.setdefault(env_id, env_factory(env_id))
            steps, divergence = await replay_episode(env, log)
            report.episodes += 1
            report.steps += steps
            if divergence is not None:
                report.divergence = divergence
                break
    finally:
        for env in envs.values():
            await env.close()
    return report
