"""Reproducing an eval or a calibration: the command-specific half of ``gymforge reproduce``.

``rollout.reproduce`` re-runs the episodes and diffs the trajectories; for an eval this
module also recomputes ``eval.json`` from the new trajectories and compares its results
(metrics, failure analysis, review flags) with the original's. Each command here supplies
how its tasks are drawn, so ``reproduce`` can report whether re-sampling still draws them.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from gymforge.core.errors import UserError
from gymforge.core.seeding import canonical_json
from gymforge.evaluate.episodes import load_stats, oracle_path_lengths
from gymforge.evaluate.folder import eval_config
from gymforge.evaluate.pipeline import eval_tasks, job_stats, write_eval
from gymforge.registry.handle import EnvHandle, open_env
from gymforge.rollout.manifest import manifest_spec
from gymforge.rollout.reproduce import Redraw
from gymforge.rollout.spec import RunSpec

__all__ = ["compare_eval", "eval_config", "redraw_for"]

RESULTS = ("metrics", "failures", "review")
"""The parts of ``eval.json`` a reproduction must match (not timestamps or run ids)."""


def redraw_for(manifest: dict[str, Any]) -> Redraw | None:
    """How the manifest's command draws its tasks, or None for ``run``'s default."""
    command = manifest.get("command", "run")
    if command == "eval":
        config = eval_config(manifest)

        def eval_draw(handle: EnvHandle, spec: RunSpec) -> list[str]:
            assert handle.tasks is not None
            return eval_tasks(handle.tasks, config, whole=spec.n is None)

        return eval_draw
    if command == "calibrate":
        task_file = manifest.get("config", {}).get("task_file")

        def calibrate_draw(handle: EnvHandle, spec: RunSpec) -> list[str]:
            assert handle.tasks is not None
            if task_file is not None:  # the ids came from a file, not a draw
                return list(manifest["tasks"])
            if handle.datasets:
                names = [d.name for d in handle.datasets]
                return handle.tasks.dataset_rows("train", names, spec.n, spec.seed)
            assert spec.n is not None
            return list(dict.fromkeys(handle.tasks.sample(spec.n, spec.seed, "train")))

        return calibrate_draw
    return None


def compare_eval(
    manifest: dict[str, Any],
    original: Path,
    out: Path,
    env: str | None = None,
    dataset: str | None = None,
) -> list[str]:
    """Recompute ``eval.json`` in ``out`` from its trajectories; one line per result that
    differs from ``original/eval.json`` (a missing original is itself a difference).
    ``env`` and ``dataset`` are what the reproduction ran on (default: the manifest's)."""
    before_file = original / "eval.json"
    if not before_file.exists():
        return [f"{before_file} is missing: nothing to compare the recomputed eval with"]
    try:
        before = json.loads(before_file.read_text())
    except json.JSONDecodeError as err:
        raise UserError(f"{before_file} is not valid JSON: {err}") from None
    spec = manifest_spec(manifest, original / "manifest.json")
    config = eval_config(manifest)
    dataset = dataset if env is not None else spec.dataset
    handle = open_env(env or spec.env, Path(dataset) if dataset else None)
    probe = handle.factory()
    try:
        stats = job_stats(
            out, manifest["tasks"], spec.seed, config.samples, oracle_path_lengths(probe)
        )
    finally:
        asyncio.run(probe.close())
    after = write_eval(out, config, stats, None, probe.spec.version)
    ids = {**_episode_keys(original), **_episode_keys(out)}
    problems = []
    for part in RESULTS:
        a, b = _stable(before.get(part, {}), ids), _stable(after.get(part, {}), ids)
        if canonical_json(a) == canonical_json(b):
            continue
        keys = sorted(
            k for k in set(a) | set(b) if canonical_json(a.get(k)) != canonical_json(b.get(k))
        )
        problems.append(f"eval.json {part} differs in {', '.join(keys[:8]) or part}")
    return problems


def _episode_keys(run_dir: Path) -> dict[str, str]:
    """``episode_id -> "task_id seed S rollout R"``: episode ids name the run (a new id per
    run), so results are compared by what the episode was."""
    return {
        s.episode_id: f"{s.task_id} seed {s.seed} rollout {s.rollout}"
        for s in load_stats(run_dir / "trajectories.jsonl")
    }


def _stable(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, str):
        return ids.get(value, value)
    if isinstance(value, list):
        return [_stable(v, ids) for v in value]
    if isinstance(value, dict):
        return {k: _stable(v, ids) for k, v in value.items()}
    return value
