"""``gymforge eval`` without the CLI: sample tasks, play K rollouts each, analyse, write.

Output directory::

    trajectories.jsonl   every episode (the runner's durable, resumable file)
    summary.json         the runner's summary
    eval.json            metrics (``metrics.compute_metrics``) + analysis + run facts
    failures.jsonl       one structured line per failed episode, with its reason and facts

Rollouts go through ``gymforge.rollout.runner.run`` with ``group=samples``, so any policy
backend works and ``resume=True`` keeps finished episodes. ``--split all`` samples ``n``
training *and* ``n`` held-out tasks from the environment's own ``Split``, so the held-out
gap compares like-sized samples of a real split.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gymforge.core.errors import UnknownTaskError, UserError
from gymforge.evaluate.analysis import failure_analysis, failure_log_rows, flag_for_review
from gymforge.evaluate.episodes import EpisodeStats, OracleSteps, load_stats
from gymforge.evaluate.estimators import DEFAULT_CONFIDENCE
from gymforge.evaluate.metrics import compute_metrics
from gymforge.tasks.source import TaskSource
from gymforge.version import __version__

SPLITS = ("train", "heldout", "all")


@dataclass
class EvalConfig:
    """What ``gymforge eval`` was asked for; stored in ``eval.json``."""

    env: str
    policy: str
    split: str = "train"
    n: int = 20
    k: int = 1
    samples: int = 1
    seed: int = 0
    confidence: float = DEFAULT_CONFIDENCE
    families: list[str] | None = None
    warnings: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise UserError(f"--split must be train, heldout or all, not {self.split!r}")
        if self.k < 1:
            raise UserError("-k must be >= 1")
        if self.samples < self.k:
            raise UserError(
                f"--samples ({self.samples}) must be >= k ({self.k}): pass@k needs k samples"
            )


def unique(ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def sample_tasks(
    tasks: TaskSource,
    split: str,
    n: int,
    seed: int,
    families: list[str] | None = None,
    warnings: list[str] | None = None,
) -> list[str]:
    """``n`` task ids of ``split``; for ``all``, ``n`` training plus ``n`` held-out ones.

    A missing held-out split under ``all`` is a warning (the gap is then not computed);
    under ``heldout`` it is an error."""
    if split != "all":
        if split == "heldout" and not tasks.split.declared:
            raise UserError("this environment declares no held-out split")
        return unique(tasks.sample(n, seed, split, families=families))  # type: ignore[arg-type]
    ids = tasks.sample(n, seed, "train", families=families)
    try:
        if not tasks.split.declared:
            raise UnknownTaskError("no held-out split declared")
        ids += tasks.sample(n, seed, "heldout", families=families)
    except UnknownTaskError as err:
        if warnings is not None:
            warnings.append(f"no held-out tasks to evaluate ({err}); the held-out gap is n/a")
    return unique(ids)


def eval_tasks(source: TaskSource, config: EvalConfig, whole: bool = False) -> list[str]:
    """The tasks ``eval`` plays: a dataset's rows of the split when datasets are loaded (all
    of them when ``whole``, else ``config.n`` drawn without replacement), or ``config.n``
    sampled tasks per split (``sample_tasks``)."""
    if source.datasets:
        n = None if whole else config.n
        return source.dataset_rows(config.split, config.families, n, config.seed)  # type: ignore[arg-type]
    return sample_tasks(
        source, config.split, config.n, config.seed, config.families, config.warnings
    )


def job_stats(
    out: Path, task_ids: Sequence[str], seed: int, samples: int, oracle: OracleSteps | None
) -> list[EpisodeStats]:
    """The stats of exactly this run's jobs from ``out/trajectories.jsonl`` (a resumed file
    may hold other episodes too)."""
    wanted = {(t, seed, r) for t in task_ids for r in range(samples)}
    stats = load_stats(out / "trajectories.jsonl", oracle)
    return [s for s in stats if (s.task_id, s.seed, s.rollout) in wanted]


def analyse(
    stats: Sequence[EpisodeStats], k: int, confidence: float = DEFAULT_CONFIDENCE
) -> dict[str, Any]:
    """Metrics plus the behavioural analysis, the body of ``eval.json``."""
    return {
        "metrics": compute_metrics(stats, k, confidence),
        "failures": failure_analysis([s for s in stats if s.counted]),
        "review": flag_for_review([s for s in stats if s.counted]),
    }


def eval_document(
    config: EvalConfig,
    stats: Sequence[EpisodeStats],
    run_summary: dict[str, Any] | None = None,
    env_version: str | None = None,
    kind: str = "eval",
) -> dict[str, Any]:
    """The ``eval.json`` data for ``stats`` (nothing written)."""
    body = analyse(stats, config.k, config.confidence)
    gap = body["metrics"]["heldout_gap"]
    if gap.get("reason") and config.split != "all":
        gap["reason"] += " (evaluate with --split all)"
    if not stats:
        config.warnings.append("no finished episode to evaluate")
    return {
        "kind": kind,
        "gymforge_version": __version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "env": config.env,
        "env_version": env_version,
        "policy": config.policy,
        "config": asdict(config),
        **body,
        "run": {
            k: (run_summary or {}).get(k)
            for k in ("run_id", "infra_errors", "infra_retries", "infra_stopped", "resumed")
        },
        "warnings": config.warnings,
    }


def write_eval(
    out: Path,
    config: EvalConfig,
    stats: Sequence[EpisodeStats],
    run_summary: dict[str, Any] | None = None,
    env_version: str | None = None,
) -> dict[str, Any]:
    """Analyse ``stats`` and write ``eval.json`` and ``failures.jsonl`` under ``out``."""
    data = eval_document(config, stats, run_summary, env_version)
    out.mkdir(parents=True, exist_ok=True)
    (out / "eval.json").write_text(json.dumps(data, indent=2) + "\n")
    with open(out / "failures.jsonl", "w", encoding="utf-8") as fh:
        for row in failure_log_rows(stats):
            fh.write(json.dumps(row, sort_keys=True) + "\n")
    return data


def run_folder_document(run_dir: Path) -> dict[str, Any]:
    """``folder.run_folder_document`` (kept here for existing imports)."""
    from gymforge.evaluate.folder import run_folder_document as document

    return document(run_dir)


def json_or_empty(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise UserError(f"{path} is not valid JSON: {err}") from err
    return data if isinstance(data, dict) else {}
