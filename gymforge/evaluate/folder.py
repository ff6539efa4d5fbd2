"""One analysis of a run folder, whoever shows it: ``eval``, ``report`` and ``gymforge view``.

A folder's figures are decided by what its manifest recorded, not by who reads it: an
eval folder is analysed with the eval's own ``EvalConfig`` (its k, samples, split,
confidence) over exactly its jobs' episodes, a plain run folder with k = 1. Step efficiency
needs each task's oracle path length, which only the environment knows: it is computed
when the manifest names an environment gymforge may open by itself (a built-in or installed
id, ``registry.resolve.recorded_env``; a file environment never is) with the dataset the run
used. ``eval`` writes ``eval.json`` through the same ``pipeline.eval_document``, so the
live view of an eval folder and its ``eval.json`` agree figure for figure.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gymforge.core.errors import GymforgeError
from gymforge.evaluate.episodes import EpisodeStats, OracleSteps, load_stats, oracle_path_lengths
from gymforge.evaluate.metrics import group_outcomes
from gymforge.evaluate.pipeline import EvalConfig, eval_document, json_or_empty
from gymforge.registry.handle import open_env
from gymforge.registry.resolve import recorded_env
from gymforge.rollout.recorded_run import RecordedRun


def eval_config(manifest: dict[str, Any]) -> EvalConfig:
    """The ``EvalConfig`` an eval's manifest recorded."""
    fields = {k: v for k, v in manifest.get("config", {}).items() if k != "warnings"}
    return EvalConfig(**fields)


def _run(manifest: dict[str, Any]) -> dict[str, Any]:
    run = manifest.get("run")
    return run if isinstance(run, dict) else {}


def folder_config(
    manifest: dict[str, Any], summary: dict[str, Any], stats: Sequence[EpisodeStats]
) -> tuple[EvalConfig, str]:
    """The configuration the folder's figures are computed with, and its ``kind``."""
    if manifest.get("command") == "eval" and manifest.get("config"):
        return eval_config(manifest), "eval"
    run = _run(manifest)
    groups = group_outcomes(stats)
    config = EvalConfig(
        str(summary.get("env") or run.get("env") or "?"),
        str(summary.get("policy") or run.get("policy") or "?"),
        str(summary.get("split") or run.get("split") or "train"),
        len(groups),
        1,
        max((len(g) for g in groups.values()), default=1),
    )
    return config, "run"


def folder_stats(
    manifest: dict[str, Any], config: EvalConfig, stats: Sequence[EpisodeStats]
) -> list[EpisodeStats]:
    """The episodes an eval's figures cover: exactly its jobs (``pipeline.job_stats``); a
    run's: all of them."""
    tasks = manifest.get("tasks")
    if manifest.get("command") != "eval" or not isinstance(tasks, list):
        return list(stats)
    seed = int(_run(manifest).get("seed", 0))
    wanted = {(t, seed, r) for t in tasks for r in range(config.samples)}
    return [s for s in stats if (s.task_id, s.seed, s.rollout) in wanted]


def folder_document(
    manifest: dict[str, Any], summary: dict[str, Any], stats: Sequence[EpisodeStats]
) -> dict[str, Any]:
    """The ``eval.json``-shaped analysis of a folder's finished episodes (nothing
    written). ``stats`` carry oracle path lengths when ``folder_oracle`` gave them."""
    config, kind = folder_config(manifest, summary, stats)
    chosen = folder_stats(manifest, config, stats)
    env = manifest.get("env")
    version = env.get("version") if isinstance(env, dict) else None
    return eval_document(config, chosen, summary, version, kind=kind)


class FolderOracle:
    """Oracle path lengths for a folder's tasks, from the environment its manifest names
    when gymforge may open it by itself; ``reason`` says why not otherwise. The
    environment is opened on first use and closed by :meth:`close`."""

    def __init__(self, manifest_path: Path) -> None:
        self.manifest_path = manifest_path
        self.reason: str | None = None
        self._steps: OracleSteps | None = None
        self._probe: Any = None
        self._tried = False
        self._cache: dict[str, int | None] = {}

    def _open(self) -> None:
        self._tried = True
        try:
            recorded = RecordedRun.at(self.manifest_path)
            env = recorded_env(str(recorded.run.get("env") or ""), str(self.manifest_path))
            handle = open_env(env, recorded.dataset(None, str(self.manifest_path)))
            self._probe = handle.factory()
            self._steps = oracle_path_lengths(self._probe)
        except (GymforgeError, OSError, ImportError) as err:
            self.reason = f"step efficiency needs the environment: {str(err).splitlines()[0]}"

    def __call__(self, task_id: str) -> int | None:
        if not self._tried:
            if not self.manifest_path.is_file():
                return None  # no manifest yet: try again on a later episode
            self._open()
        if self._steps is None:
            return None
        if task_id not in self._cache:
            self._cache[task_id] = self._steps(task_id)
        return self._cache[task_id]

    def close(self) -> None:
        if self._probe is not None:
            asyncio.run(self._probe.close())
            self._probe = None


def run_folder_document(run_dir: Path) -> dict[str, Any]:
    """The analysis of a run folder as it is on disk (``report`` of a folder without
    ``eval.json``): ``folder_document`` over its finished episodes."""
    summary = json_or_empty(run_dir / "summary.json")
    manifest = json_or_empty(run_dir / "manifest.json")
    oracle = FolderOracle(run_dir / "manifest.json")
    try:
        stats = load_stats(run_dir / "trajectories.jsonl", oracle)
    finally:
        oracle.close()
    doc = folder_document(manifest, summary, stats)
    if oracle.reason:
        doc["warnings"].append(oracle.reason)
    return doc
