"""``gymforge calibrate`` without the CLI: K rollouts per task, pass rates, band, feedback.

Output directory::

    trajectories.jsonl, summary.json   the runner's (resumable) output
    calibration.json                   config, counts, every task row, zero-variance groups,
                                       curriculum suggestions, hard-negative pool, warnings
    calibrated.jsonl                   the calibrated task set: tasks inside the band
    retired.jsonl                      the other tasks, each with ``reason`` and ``detail``
    hard_negatives.sqlite              the hard-negative pool (``HardNegativePool``)
    failures.jsonl                     one structured line per failed rollout

Rollouts count as ``trajectory.outcome`` says: a verifier error after the agent acted is a
failed rollout in its task's ``n`` (and in ``verifier_errors``, per row and overall), so a
policy cannot lift a task's pass rate by making the judge raise.

``calibrated.jsonl`` feeds back in as ``--tasks``, so a set can be re-calibrated later
against a stronger policy. A run in which no task lands in the band is not an error: the
warning says why (``bands.no_band_reason``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gymforge.calibrate.bands import REASONS, Band, calibration_row, no_band_reason
from gymforge.calibrate.feedback import curriculum_feedback, feed_hard_negatives
from gymforge.core.errors import ConfigError, UserError
from gymforge.evaluate.analysis import failure_log_rows
from gymforge.evaluate.episodes import EpisodeStats
from gymforge.evaluate.estimators import DEFAULT_CONFIDENCE
from gymforge.evaluate.metrics import group_outcomes
from gymforge.tasks.files import utf8_text
from gymforge.tasks.source import TaskSource
from gymforge.trajectory.schema import load_line
from gymforge.version import __version__

POOL_FILE = "hard_negatives.sqlite"


@dataclass
class CalibrateConfig:
    """What ``gymforge calibrate`` was asked for; stored in ``calibration.json``."""

    env: str
    policy: str
    samples: int = 8
    band: Band = field(default_factory=Band)
    n: int = 50
    seed: int = 0
    confidence: float = DEFAULT_CONFIDENCE
    spawn_top: int = 5
    families: list[str] | None = None
    task_file: str | None = None
    warnings: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise UserError("--samples must be >= 1")
        if self.samples < 2:
            self.warnings.append(
                "--samples 1: every task is a zero-variance group; use 8 or more rollouts"
            )

    def as_dict(self) -> dict[str, Any]:
        return {
            "env": self.env,
            "policy": self.policy,
            "samples": self.samples,
            "band": self.band.as_list(),
            "n": self.n,
            "seed": self.seed,
            "confidence": self.confidence,
            "spawn_top": self.spawn_top,
            "families": self.families,
            "task_file": self.task_file,
        }


def load_task_file(path: str | Path) -> list[str]:
    """Task ids from a file: plain ids one a line, or JSONL rows with ``task_id`` (such as a
    previous ``calibrated.jsonl``). Blank lines and ``#`` comments are skipped."""
    ids = []
    for n, line in enumerate(utf8_text(Path(path).read_bytes(), path).splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("{"):
            try:
                task_id = load_line(line).get("task_id")
            except (json.JSONDecodeError, AttributeError):
                task_id = None
            if not isinstance(task_id, str):
                raise ConfigError(f"{path}:{n}: a JSON line needs a string 'task_id'")
            line = task_id
        ids.append(line)
    if not ids:
        raise ConfigError(f"{path} names no task")
    return list(dict.fromkeys(ids))


def select_tasks(tasks: TaskSource, config: CalibrateConfig) -> tuple[list[str], list[str]]:
    """``(train_ids, heldout_ids)``: training tasks are calibrated; held-out ones (possible
    only in a ``--tasks`` file) are retired unplayed, since no training set may hold them."""
    if config.task_file is None:
        ids = tasks.sample(config.n, config.seed, "train", families=config.families)
        return list(dict.fromkeys(ids)), []
    train: list[str] = []
    held: list[str] = []
    for task_id in load_task_file(config.task_file):
        (held if tasks.resolve(task_id).split == "heldout" else train).append(task_id)
    if held:
        config.warnings.append(f"{len(held)} held-out tasks in {config.task_file} retired unplayed")
    return train, held


def calibration_rows(
    stats: Sequence[EpisodeStats],
    tasks: TaskSource,
    train_ids: Sequence[str],
    heldout_ids: Sequence[str],
    config: CalibrateConfig,
) -> list[dict[str, Any]]:
    """One row per task, in task order, with its estimate, status and ``verifier_errors``
    (failed rollouts in ``n``, as ``trajectory.outcome`` counts them; an unscored rollout is
    in no row)."""
    counted = [s for s in stats if s.counted]
    groups = {task_id: eps for (task_id, _), eps in group_outcomes(counted).items()}
    rows = []
    for task_id in [*train_ids, *heldout_ids]:
        eps = groups.get(task_id, [])
        task = tasks.resolve(task_id)
        base = {
            "task_id": task_id,
            "family": task.family,
            "difficulty": task.difficulty,
            "split": task.split,
        }
        rewards = [e.reward for e in eps]
        row = calibration_row(base, sum(e.success for e in eps), len(eps), config.band)
        row["verifier_errors"] = errors = sum(e.verifier_error for e in eps)
        if errors:  # a judge that raised: the policy's doing, or the task's (see hacks)
            row["detail"] += f"; {errors} of {len(eps)} rollouts ended in a verifier error"
        row["zero_reward_variance"] = len(eps) > 1 and max(rewards) == min(rewards)
        if task_id in heldout_ids:
            row.update(status="retired", reason="heldout", detail="held-out task", decisive=True)
        rows.append(row)
    return rows


def write_calibration(
    out: Path,
    config: CalibrateConfig,
    stats: Sequence[EpisodeStats],
    tasks: TaskSource,
    train_ids: Sequence[str],
    heldout_ids: Sequence[str] = (),
    run_summary: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Classify, feed the curriculum and the pool, and write every output file."""
    rows = calibration_rows(stats, tasks, train_ids, heldout_ids, config)
    counted = [s for s in stats if s.counted]
    errors = sum(s.verifier_error for s in counted)
    kept = [r for r in rows if r["status"] == "in_band"]
    retired = [r for r in rows if r["status"] != "in_band"]
    counts = {reason: sum(r["reason"] == reason for r in retired) for reason in REASONS}
    zero = [r for r in rows if r["reason"] == "zero_variance"]
    if not kept:
        config.warnings.append(
            f"no task in the band [{config.band.lo:g}, {config.band.hi:g}]: "
            + no_band_reason(counts, config.samples)
        )
    undecided = sum(not r["decisive"] for r in retired if r["reason"] != "no_data")
    if undecided:
        config.warnings.append(
            f"{undecided} retired tasks have intervals reaching into the band; "
            "more --samples would make those calls firmer"
        )
    train_stats = [s for s in counted if s.split == "train"]
    curriculum = curriculum_feedback(tasks, train_stats, config.band, config.samples)
    pool = feed_hard_negatives(
        tasks, train_stats, out / POOL_FILE, seed=config.seed, spawn_top=config.spawn_top
    )
    data = {
        "kind": "calibration",
        "gymforge_version": __version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "env": config.env,
        "policy": config.policy,
        "config": config.as_dict(),
        "band": config.band.as_list(),
        "tasks": len(rows),
        "episodes": len(counted),
        "verifier_errors": errors,
        "verifier_error_rate": errors / len(counted) if counted else None,
        "unscored": len(stats) - len(counted),
        "in_band": len(kept),
        "retired": len(retired),
        "retired_by_reason": counts,
        "zero_variance": {
            "groups": len(zero),
            "all_failed": sum(r["successes"] == 0 for r in zero),
            "all_succeeded": sum(r["successes"] == r["n"] for r in zero),
            "identical_rewards": sum(r["zero_reward_variance"] for r in rows),
            "examples": [r["task_id"] for r in zero[:20]],
        },
        "curriculum": curriculum,
        "hard_negatives": pool,
        "rows": rows,
        "run": {
            k: (run_summary or {}).get(k)
            for k in ("run_id", "infra_errors", "infra_retries", "infra_stopped", "resumed")
        },
        "warnings": config.warnings,
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "calibration.json").write_text(json.dumps(data, indent=2) + "\n")
    for name, subset in (("calibrated.jsonl", kept), ("retired.jsonl", retired)):
        with open(out / name, "w", encoding="utf-8") as fh:
            for row in subset:
                fh.write(json.dumps(row, sort_keys=True) + "\n")
    with open(out / "failures.jsonl", "w", encoding="utf-8") as fh:
        for line in failure_log_rows(stats):
            fh.write(json.dumps(line, sort_keys=True) + "\n")
    return data
