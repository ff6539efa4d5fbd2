"""Reproducibility: ``reproduce``."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from gymforge.cli.common import app, err, fail, friendly
from gymforge.rollout.reproduce import reproduce


@app.command("reproduce")
@friendly
def reproduce_cmd(
    manifest: Path = typer.Argument(..., help="A run's manifest.json."),
    out: Path = typer.Option(..., "--out", "-o", help="Where to write the new run."),
    as_json: bool = typer.Option(False, "--json", help="Print the diff report to stdout."),
) -> None:
    """Re-run a run from its manifest (scripted policies, or recorded actions for a model)
    and diff it against the original; exit 0 only if every episode matches."""
    report = reproduce(manifest, out)
    if as_json:
        print(json.dumps(report.as_dict(), indent=2))
    err.print(
        f"reproduced with policy {report.policy}: {report.identical}/{report.compared} "
        f"episodes identical; missing {len(report.missing)}, extra {len(report.extra)}; "
        f"re-sampling the tasks {'matches' if report.sampling_matches else 'DIFFERS'}"
    )
    for line in report.differences:
        err.print(f"  {line}", highlight=False)
    if not report.ok:
        fail("the reproduction differs from the original run", 1)
