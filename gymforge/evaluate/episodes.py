"""Per-episode facts for evaluation, distilled from trajectory records.

:class:`EpisodeStats` holds what the metrics, the behavioural analysis and the report need
from one episode: the closing record's totals plus counts read off its steps (tool calls,
tool errors by tool and kind, malformed outputs, injected faults, the final verdict facts).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gymforge.core.capabilities import ORACLE_PLAN, TASKS, supported
from gymforge.trajectory.io import read_episodes
from gymforge.trajectory.outcome import classify_outcome

OracleSteps = Callable[[str], int | None]
"""Maps a task id to the length of its reference path (None when there is no oracle)."""


@dataclass(frozen=True)
class EpisodeStats:
    """One finished episode, as evaluation sees it. ``success``, ``failure_reason``,
    ``verifier_error`` and ``counted`` are ``trajectory.outcome.classify_outcome``'s: a
    verifier error after the agent acted is a counted failure; an unscored episode
    (``counted`` False) is in no rate."""

    episode_id: str
    task_id: str
    seed: int
    rollout: int
    family: str
    difficulty: int
    split: str
    success: bool
    reward: float
    components: dict[str, float]
    steps: int
    terminated: bool
    truncated: bool
    failure_reason: str | None
    tokens: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    invalid_calls: int = 0
    malformed: int = 0
    replies: int = 0
    faults: int = 0
    tools_used: tuple[str, ...] = ()
    per_tool: dict[str, tuple[int, int]] = field(default_factory=dict)
    error_kinds: dict[str, int] = field(default_factory=dict)
    verdict_facts: dict[str, Any] = field(default_factory=dict)
    verifier_error: bool = False
    counted: bool = True
    oracle_steps: int | None = None

    @property
    def group(self) -> tuple[str, int]:
        """The GRPO group key: rollouts of one ``(task_id, seed)``."""
        return (self.task_id, self.seed)

    @property
    def step_efficiency(self) -> float | None:
        """Reference path length over steps taken (1.0 = as short as the oracle's plan)."""
        if self.oracle_steps is None or self.steps <= 0:
            return None
        return self.oracle_steps / self.steps


def stats_from_records(
    records: Sequence[dict[str, Any]], oracle_steps: int | None = None
) -> EpisodeStats:
    """Build the stats of one episode from its raw records (steps, then the episode record)."""
    end = records[-1]
    if end.get("record") != "episode":
        raise ValueError(f"episode {end.get('episode_id')} has no closing record")
    per_tool: dict[str, list[int]] = {}
    kinds: Counter[str] = Counter()
    calls = errors = invalid = malformed = replies = faults = 0
    facts: dict[str, Any] = {}
    for rec in records[:-1]:
        action = rec.get("action") or {}
        kind = action.get("kind")
        if kind == "invalid":
            malformed += 1
        elif kind == "reply":
            replies += 1
        elif kind == "tool_call":
            calls += 1
            name = str(action.get("name", ""))[:80]
            counts = per_tool.setdefault(name, [0, 0])
            counts[0] += 1
            result = rec.get("tool_result") or {}
            if result and not result.get("ok", True):
                errors += 1
                counts[1] += 1
                err_kind = (result.get("error") or {}).get("kind", "unknown")
                kinds[err_kind] += 1
                invalid += err_kind in ("unknown_tool", "invalid_arguments")
            if result.get("fault"):
                faults += 1
        info = rec.get("info") or {}
        verdict = info.get("verdict")
        if isinstance(verdict, dict):
            facts = dict(verdict.get("facts") or {})
    outcome = classify_outcome(end)
    return EpisodeStats(
        episode_id=end["episode_id"],
        task_id=end["task_id"],
        seed=int(end["seed"]),
        rollout=int(end.get("rollout", 0)),
        family=end.get("family", ""),
        difficulty=int(end.get("difficulty", 0)),
        split=end.get("split", "train"),
        success=bool(end["success"]),
        reward=float(end["reward"]),
        components={k: float(v) for k, v in end.get("reward_components", {}).items()},
        steps=int(end["steps"]),
        terminated=bool(end["terminated"]),
        truncated=bool(end["truncated"]),
        failure_reason=outcome.reason,
        tokens=int(end.get("tokens", 0)),
        tool_calls=calls,
        tool_errors=errors,
        invalid_calls=invalid,
        malformed=malformed,
        replies=replies,
        faults=faults,
        tools_used=tuple(sorted(per_tool)),
        per_tool={k: (v[0], v[1]) for k, v in sorted(per_tool.items())},
        error_kinds=dict(sorted(kinds.items())),
        verdict_facts=facts,
        verifier_error=outcome.verifier_error,
        counted=outcome.counted,
        oracle_steps=oracle_steps,
    )


def load_episode_records(path: str | Path) -> list[list[dict[str, Any]]]:
    """The raw records of every *finished* episode in a trajectory file, schema-checked."""
    return [log.raw for log in read_episodes(path) if log.end is not None]


def load_stats(path: str | Path, oracle_steps: OracleSteps | None = None) -> list[EpisodeStats]:
    """:class:`EpisodeStats` of every finished episode in ``path``, in file order."""
    return stats_from_episodes(load_episode_records(path), oracle_steps)


def stats_from_episodes(
    episodes: Iterable[Sequence[dict[str, Any]]], oracle_steps: OracleSteps | None = None
) -> list[EpisodeStats]:
    cache: dict[str, int | None] = {}
    out = []
    for records in episodes:
        task_id = records[-1]["task_id"]
        if oracle_steps is not None and task_id not in cache:
            cache[task_id] = oracle_steps(task_id)
        out.append(stats_from_records(records, cache.get(task_id)))
    return out


def oracle_path_lengths(env: object) -> OracleSteps:
    """An :data:`OracleSteps` over one environment instance: ``len(env.oracle_plan(task))``
    for the task resolved by ``env.tasks``; None when the environment has no plan."""
    planner, source = supported(env, ORACLE_PLAN), supported(env, TASKS)

    def steps(task_id: str) -> int | None:
        if planner is None or source is None:
            return None
        try:
            plan = planner.oracle_plan(source.tasks.resolve(task_id))
        except Exception:  # an id the env cannot resolve, or a plan that crashes: no figure
            return None
        return len(plan) if plan else None

    return steps
