"""Reproducibility: ``reproduce``."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from gymforge.cli.common import app, err, fail, friendly, overwrite_option
from gymforge.cli.sandbox_flags import use_sandbox
from gymforge.evaluate.reproduce import compare_eval, redraw_for
from gymforge.rollout.manifest import read_manifest
from gymforge.rollout.reproduce import reproduce

SAMPLING = {True: "matches", False: "DIFFERS", None: "not checked"}


@app.command("reproduce")
@friendly
def reproduce_cmd(
    manifest: Path = typer.Argument(..., help="The manifest.json of a run, eval or calibrate."),
    out: Path = typer.Option(..., "--out", "-o", help="Where to write the new run."),
    overwrite: bool = overwrite_option(),
    as_json: bool = typer.Option(False, "--json", help="Print the diff report to stdout."),
    sandbox: str | None = typer.Option(
        None,
        "--sandbox",
        help="Sandbox backend for untrusted code (local or docker). Default: the one the run "
        "recorded in its manifest.",
    ),
) -> None:
    """Re-run a run, eval or calibration from its manifest (scripted policies, or recorded
    actions for a model) and diff it against the original; for an eval, also recompute
    eval.json and compare its results. Exits 0 only if everything matches."""
    if manifest.is_dir():
        manifest = manifest / "manifest.json"
    recorded = read_manifest(manifest)
    use_sandbox(sandbox or (recorded.get("sandbox") or {}).get("kind"))
    report = reproduce(manifest, out, redraw=redraw_for(recorded), overwrite=overwrite)
    if report.command == "eval":
        report.results = compare_eval(recorded, manifest.parent, out)
    if as_json:
        print(json.dumps(report.as_dict(), indent=2))
    err.print(
        f"reproduced the {report.command} with policy {report.policy}: "
        f"{report.identical}/{report.compared} episodes identical; missing "
        f"{len(report.missing)}, extra {len(report.extra)}; re-sampling the tasks "
        f"{SAMPLING[report.sampling_matches]}"
        + (
            f"; eval.json {'differs' if report.results else 'matches'}"
            if report.command == "eval"
            else ""
        )
    )
    for line in [*report.differences, *report.results]:
        err.print(f"  {line}", highlight=False)
    if not report.ok:
        fail(f"the reproduction differs from the original {report.command}", 1)
