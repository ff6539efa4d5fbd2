"""``gymforge eval`` of a half-oracle policy (``gymforge.testing.half_oracle``) through the
real CLI, read back as each task's verdict and the eval's metrics (imported as a plain
module by the counting attacks)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def eval_half_policy(
    gymforge_cli: Any, env: str, dataset: Path, policy: Path, out: Path
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """(verdict by task id, ``eval.json``'s metrics) of ``gymforge eval ENV --dataset
    DATASET --policy POLICY:policy``, which must exit 0."""
    proc = gymforge_cli(
        "eval", env, "--dataset", str(dataset), "--policy", f"{policy}:policy",
        "--out", str(out), timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    verdicts: dict[str, dict[str, Any]] = {}
    for line in (out / "trajectories.jsonl").read_text().splitlines():
        row = json.loads(line)
        if "verdict" in (row.get("info") or {}):
            verdicts[row["task_id"]] = row["info"]["verdict"]
    return verdicts, json.loads((out / "eval.json").read_text())["metrics"]
