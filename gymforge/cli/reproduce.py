"""Reproducibility: ``reproduce``."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from gymforge.cli.common import SEAL_KEY_HELP, app, err, fail, friendly, overwrite_option
from gymforge.cli.sandbox_flags import use_sandbox
from gymforge.evaluate.reproduce import compare_eval, redraw_for
from gymforge.rollout.manifest import read_manifest
from gymforge.rollout.reproduce import reproduce
from gymforge.trajectory.documents import seal_warnings
from gymforge.trajectory.seal import load_key

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
    env: str | None = typer.Option(
        None,
        "--env",
        help="The environment to run on (needed when the manifest names a file or import "
        "path: a manifest never chooses the code that is imported).",
    ),
    dataset: Path | None = typer.Option(
        None,
        "--dataset",
        help="The dataset the run used, when it is no longer where the manifest says (its "
        "sha256 must match the manifest's).",
    ),
    seal_key_file: Path | None = typer.Option(None, "--seal-key-file", help=SEAL_KEY_HELP),
) -> None:
    """Re-run a run, eval or calibration from its manifest (scripted policies, or recorded
    actions for a model) and diff it against the original; for an eval, also recompute
    eval.json and compare its results. Exits 0 only if everything matches."""
    if manifest.is_dir():
        manifest = manifest / "manifest.json"
    recorded = read_manifest(manifest)
    use_sandbox(sandbox or (recorded.get("sandbox") or {}).get("kind"))
    report = reproduce(
        manifest, out, redraw=redraw_for(recorded), overwrite=overwrite, env=env, dataset=dataset
    )
    for warning in seal_warnings(manifest.parent, load_key(seal_key_file)):  # the original's
        err.print(f"[yellow]warning:[/] {warning}", highlight=False, soft_wrap=True)
    if report.command == "eval":
        report.results = compare_eval(recorded, manifest.parent, out, report.env, report.dataset)
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
