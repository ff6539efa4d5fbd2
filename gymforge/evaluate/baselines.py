"""Scripted baselines played on a finished run's own tasks: the reference of
``gymforge hacks DIR --baseline oracle|noop|random``.

The run's ``manifest.json`` says how to open its environment (id, dataset); its trajectory
file says which ``(task_id, seed)`` pairs it played. The baseline plays each pair once (one
rollout: the scripted policies are deterministic per task and seed, ``random`` is seeded by
them), in memory, on the local executor, and its verifier-error rate is counted with the
same rule as the run's (``trajectory.outcome``). Nothing is written into the run directory.
"""

from __future__ import annotations

from pathlib import Path

from gymforge.core.errors import UserError
from gymforge.reward.verifier_errors import ErrorRate
from gymforge.rollout.executors import executor_for
from gymforge.rollout.jobs import expand
from gymforge.rollout.manifest import manifest_spec, read_manifest
from gymforge.rollout.plan import prepare
from gymforge.rollout.runner import run_sync
from gymforge.trajectory.io import read_episodes
from gymforge.trajectory.outcome import classify_outcome, count_outcomes

SCRIPTED_BASELINES = ("oracle", "noop", "random")


def run_pairs(run_dir: Path) -> list[tuple[str, int]]:
    """The distinct ``(task_id, seed)`` pairs of the finished episodes in ``run_dir``."""
    pairs = {
        (log.end.task_id, log.end.seed): None
        for log in read_episodes(run_dir / "trajectories.jsonl")
        if log.end is not None
    }
    return list(pairs)


def play_baseline(run_dir: Path, policy: str) -> ErrorRate:
    """The verifier-error rate of scripted ``policy`` on the tasks of the run in
    ``run_dir``; UserError when the run has no manifest or no finished episode."""
    if policy not in SCRIPTED_BASELINES:
        raise UserError(f"a computed baseline is one of {', '.join(SCRIPTED_BASELINES)}")
    path = run_dir / "manifest.json"
    if not path.is_file():
        raise UserError(
            f"{run_dir} has no manifest.json to play the {policy} baseline from; pass a "
            "baseline run directory instead"
        )
    pairs = run_pairs(run_dir)
    if not pairs:
        raise UserError(f"{run_dir} holds no finished episode to play the {policy} baseline on")
    spec = manifest_spec(read_manifest(path), path).model_copy(
        update={
            "policy": policy,
            "tasks": list(dict.fromkeys(t for t, _ in pairs)),
            "jobs": expand(pairs),
            "group": 1,
            "epochs": 1,
            "backend": "local",
            "out": None,
            "resume": False,
        }
    )
    ready = prepare(spec)
    result = run_sync(ready.spec, executor_for(ready.spec, ready.handle, ready.source))
    ends = result.episodes
    counts = count_outcomes(classify_outcome(e) for e in ends)
    if not counts.episodes:
        why = f": {result.errors[0]}" if result.errors else ""
        raise UserError(f"the {policy} baseline finished no episode on {run_dir}'s tasks{why}")
    envs = sorted({f"{e['env_id']}@{e['env_version']}" for e in ends})
    return ErrorRate(policy, envs[0], counts.verifier_errors, counts.episodes)
