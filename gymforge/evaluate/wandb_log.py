"""Optional Weights & Biases logging of the same metrics ``eval.json`` and
``calibration.json`` hold (``--wandb``).

Scalars are flattened to slash-separated keys (``success/rate``, ``pass@k/4``,
``heldout_gap/gap``) and logged once and as the run summary; per-family and per-difficulty
breakdowns become tables; per-task pass rates a histogram. ``WANDB_MODE=offline`` writes the
run under ``OUT/wandb/`` without any network, which is how the tests run it. wandb is an
optional extra: ``pip install 'gymforge[wandb]'``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from gymforge.core.errors import UserError
from gymforge.settings import wandb_project

BREAKDOWNS = ("by_family", "by_difficulty", "by_split")
SKIPPED = frozenset({"histogram", "config"})


def flatten_scalars(data: Mapping[str, Any], prefix: str = "") -> dict[str, float]:
    """Every numeric leaf of nested dicts as ``{"a/b/c": value}``; lists, None and the
    ``SKIPPED`` subtrees (step histograms) left out."""
    out: dict[str, float] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, int | float):  # bool included
            out[name] = float(value)
        elif isinstance(value, Mapping) and key not in SKIPPED:
            out.update(flatten_scalars(value, name + "/"))
    return out


def _rows(rows: list[dict[str, Any]]) -> tuple[list[str | int], list[list[Any]]]:
    columns: list[str | int] = [
        "key",
        "episodes",
        "success",
        "lo",
        "hi",
        "verifier_error_rate",
        "pass@k",
        "pass^k",
        "mean_reward",
    ]
    data = [
        [
            str(r["key"]),
            r["episodes"],
            r["success"]["rate"],
            r["success"]["lo"],
            r["success"]["hi"],
            r.get("verifier_error_rate"),
            r.get("pass@k"),
            r.get("pass^k"),
            r.get("mean_reward"),
        ]
        for r in rows
    ]
    return columns, data


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    """wandb prints progress to stdout; the CLI keeps stdout for machine output only."""
    with contextlib.redirect_stdout(_StderrProxy()):
        yield


class _StderrProxy:
    def write(self, text: str) -> int:
        import sys

        return sys.stderr.write(text)

    def flush(self) -> None:
        import sys

        sys.stderr.flush()


def log_to_wandb(
    kind: str,
    data: Mapping[str, Any],
    *,
    out_dir: str | Path,
    project: str | None = None,
    name: str | None = None,
    config: Mapping[str, Any] | None = None,
) -> str:
    """Log one eval or calibration result as a finished W&B run; returns its directory."""
    try:
        import wandb
    except ImportError:
        raise UserError("--wandb needs the wandb package: pip install 'gymforge[wandb]'") from None
    metrics = data.get("metrics", data)
    scalars = flatten_scalars({k: v for k, v in metrics.items() if k not in BREAKDOWNS})
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    with _quiet_stdout():
        run = wandb.init(
            project=project or wandb_project() or "gymforge",
            name=name,
            job_type=kind,
            dir=str(out_dir),
            config=dict(config or {}),
        )
        try:
            run.log(scalars)
            for key in BREAKDOWNS:
                if metrics.get(key):
                    columns, rows = _rows(metrics[key])
                    run.log({key: wandb.Table(columns=columns, data=rows)})
            per_task = metrics.get("pass_rates") or data.get("rows") or []  # eval or calibration
            rates = [r["pass_rate"] for r in per_task if r["n"]]
            if rates:
                run.log({"pass_rate_histogram": wandb.Histogram(rates, num_bins=20)})
            run.summary.update(scalars)
            where = str(run.dir)
        finally:
            run.finish()
    return where
