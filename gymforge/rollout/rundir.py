"""Run directories that cannot mix: what ``run``, ``eval`` and ``calibrate`` check before
writing into ``--out``.

A directory holding a previous run's files is refused unless the invocation says what to do
with them: ``--resume`` continues that run (refused, naming the fields, when the new
invocation differs from the run's ``manifest.json``), ``--overwrite`` deletes the run's own
files first (and nothing else). The library runner does none of this; it is the CLI's
promise to a user who reuses a directory by mistake.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gymforge.core.errors import UserError
from gymforge.rollout.manifest import read_manifest, resume_mismatches

RUN_FILES = (
    "trajectories.jsonl",
    "summary.json",
    "manifest.json",
    "eval.json",
    "failures.jsonl",
    "calibration.json",
    "calibrated.jsonl",
    "retired.jsonl",
    "hard_negatives.sqlite",
)
"""The files a run, eval or calibration writes into its directory; ``--overwrite`` removes
these and only these."""


def run_files(out: Path) -> list[Path]:
    """The run files present in ``out``."""
    return [out / name for name in RUN_FILES if (out / name).exists()]


def remove_run(out: Path) -> list[Path]:
    """Delete the run files in ``out``; returns what was removed."""
    found = run_files(out)
    for path in found:
        path.unlink()
    return found


def prepare_out(
    out: Path, new: dict[str, Any], *, resume: bool, overwrite: bool, resumable: bool = True
) -> None:
    """Check that the run described by manifest ``new`` may write into ``out``; with
    ``overwrite``, remove a previous run's files. ``UserError`` says what to do otherwise
    (suggesting ``--resume`` only for a ``resumable`` command)."""
    if resume and overwrite:
        raise UserError("--resume and --overwrite contradict each other: pick one")
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file, not a directory")
    found = run_files(out) if out.is_dir() else []
    if not found:
        return
    if overwrite:
        remove_run(out)
        return
    if not resume:
        held = f"{out} already holds a run ({', '.join(p.name for p in found)})"
        if not resumable:
            raise UserError(f"{held}: pass --overwrite to replace it, or give another --out")
        raise UserError(
            f"{held}: pass --resume to continue it, or --overwrite to delete it and start afresh"
        )
    manifest = out / "manifest.json"
    if not manifest.exists():
        raise UserError(
            f"cannot resume {out}: it has no manifest.json to check this invocation "
            "against; pass --overwrite to start afresh"
        )
    problems = resume_mismatches(read_manifest(manifest), new)
    if problems:
        raise UserError(
            f"cannot resume {out}: this invocation differs from the run there in "
            + "; ".join(problems)
            + " (use another --out, or --overwrite to replace that run)"
        )
