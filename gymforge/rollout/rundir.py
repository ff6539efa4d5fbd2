"""Run directories that cannot mix: what ``run``, ``eval`` and ``calibrate`` check before
writing into ``--out``.

A directory holding a previous run's files is refused unless the invocation says what to do
with them: ``--resume`` continues that run (refused, naming the fields, when the new
invocation differs from the run's ``manifest.json``), ``--overwrite`` deletes the run's own
files and what other commands derived from it there (``DERIVED_FILES``: the reward-hacking
report, exports, workbooks) first, and nothing else. The library runner does none of this;
it is the CLI's promise to a user who reuses a directory by mistake.
"""

from __future__ import annotations

import os
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
"""The files a run, eval or calibration writes into its directory."""

HACKS_REPORT = "hacks.md"
"""``gymforge hacks``'s report in a run directory (its JSON beside it: ``hacks.json``)."""
EXPORT_FORMATS = ("trl", "sft", "parquet")
WORKBOOKS = "workbooks"
"""``gymforge export --format xlsx``'s directory of ``*.xlsx`` workbooks in a run directory."""


def export_file(run_dir: Path, fmt: str) -> Path:
    """Where ``gymforge export --format FMT`` writes by default: ``export.FMT[.jsonl]``."""
    return run_dir / (f"export.{fmt}" + ("" if fmt == "parquet" else ".jsonl"))


DERIVED_FILES = (
    HACKS_REPORT,
    str(Path(HACKS_REPORT).with_suffix(".json")),
    *(export_file(Path(), fmt).name for fmt in EXPORT_FORMATS),
)
"""What other commands derive from a run into its directory by default (``hacks``,
``export``): one list, so ``--overwrite`` can never leave a previous run's report beside the
new run, looking current. Workbooks (``WORKBOOKS/*.xlsx``) are derived too."""


def run_files(out: Path) -> list[Path]:
    """The run files present in ``out``."""
    return [out / name for name in RUN_FILES if (out / name).exists()]


def derived_files(out: Path) -> list[Path]:
    """The derived outputs present in ``out`` (see ``DERIVED_FILES``)."""
    found = [out / name for name in DERIVED_FILES if (out / name).is_file()]
    return found + sorted((out / WORKBOOKS).glob("*.xlsx"))


def remove_run(out: Path) -> list[Path]:
    """Delete the run files and derived outputs in ``out`` (nothing else: a workbooks
    directory holding other files is kept with them); returns what was removed."""
    found = run_files(out) + derived_files(out)
    for path in found:
        path.unlink()
    workbooks = out / WORKBOOKS
    if workbooks.is_dir() and not any(workbooks.iterdir()):
        workbooks.rmdir()
    return found


def check_out(path: Path, *, flag: str = "--out", directory: bool = True) -> Path:
    """``path`` checked as the directory (or, ``directory=False``, the file) a command is
    about to write, before anything is written: a ``UserError`` naming ``flag`` when it is the
    other kind, or when the nearest existing parent is a file or not writable. Nothing is
    created here; every command's ``--out`` goes through this one check."""
    if path.exists():
        if directory and not path.is_dir():
            raise UserError(f"{flag} {path} is a file, not a directory")
        if not directory and path.is_dir():
            raise UserError(f"{flag} {path} is a directory: give a file name")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise UserError(f"{flag} {path}: {parent} is a file, not a directory")
            if not os.access(parent, os.W_OK | os.X_OK) and not path.exists():
                raise UserError(f"{flag} {path}: cannot write into {parent} (permission denied)")
            break
    return path


def prepare_out(
    out: Path, new: dict[str, Any], *, resume: bool, overwrite: bool, resumable: bool = True
) -> None:
    """Check that the run described by manifest ``new`` may write into ``out``; with
    ``overwrite``, remove a previous run's files. ``UserError`` says what to do otherwise
    (suggesting ``--resume`` only for a ``resumable`` command)."""
    if resume and overwrite:
        raise UserError("--resume and --overwrite contradict each other: pick one")
    check_out(out)
    if overwrite:
        if out.is_dir():
            remove_run(out)
        return
    found = run_files(out) if out.is_dir() else []
    if not found:
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
