"""Trajectory files: ``replay``, ``verify-log``, ``schema``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Literal

import typer

from gymforge.cli.args import out_dir, out_file
from gymforge.cli.common import (
    INFRA_EXIT,
    SEAL_KEY_HELP,
    app,
    err,
    fail,
    friendly,
    one_of,
    open_env,
)
from gymforge.cli.harbor_flags import IMAGE_MAP
from gymforge.cli.sandbox_flags import use_sandbox
from gymforge.core.errors import GymforgeError, UserError
from gymforge.registry.resolve import recorded_env
from gymforge.rollout.recorded_run import RecordedRun
from gymforge.rollout.replay import replay_episodes
from gymforge.rollout.rundir import WORKBOOKS, export_file
from gymforge.trajectory.check import FileCheck, check_file, describe_check, looks_finished
from gymforge.trajectory.documents import TRAJECTORIES, check_documents
from gymforge.trajectory.export import Format, export
from gymforge.trajectory.schema import trajectory_json_schema
from gymforge.trajectory.seal import load_key
from gymforge.wording import plural

UNFINISHED_EXIT = INFRA_EXIT
"""``verify-log``/``replay`` of a sealed file that no run seal closes (an interrupted run)."""


def _checked(path: Path, key_file: Path | None) -> FileCheck:
    """``check_file`` with the key of ``--seal-key-file`` or ``$GYMFORGE_SEAL_KEY``; a
    finished file without a single episode (empty, or only a run seal) is a ``UserError``:
    "ok: 0 episodes" would pass a run that recorded nothing."""
    file = path / TRAJECTORIES if path.is_dir() else path
    check = check_file(file, load_key(key_file))
    if not check.episodes and check.finished:
        held = "only a run seal" if check.run_seals else "no records"
        raise UserError(
            f"{file} holds {held}, no episode: nothing to check (give the trajectories of a "
            "run that finished at least one episode)"
        )
    return check


@app.command()
@friendly
def replay(
    path: Path = typer.Argument(..., help="A trajectories.jsonl file."),
    env: str | None = typer.Option(
        None,
        "--env",
        help="The environment to replay on (needed when the file names a file or import path: "
        "a file never chooses the code replay imports).",
    ),
    dataset: Path | None = typer.Option(None, "--dataset", help="The dataset the run used."),
    seal_key_file: Path | None = typer.Option(None, "--seal-key-file", help=SEAL_KEY_HELP),
    image_map: list[str] | None = IMAGE_MAP,
) -> None:
    """Check the file (seals too, with a key), then re-run every episode from its task id,
    seed and actions; exit 0 only if all match, including each action against the recorded
    policy output it was parsed from. Exit 3 for a sealed file no run seal closes."""
    use_sandbox(None, image_map)
    check = _checked(path, seal_key_file)
    episodes = check.episodes
    file = path / "trajectories.jsonl" if path.is_dir() else path
    recorded = RecordedRun.beside(file)  # the run's manifest, when the file sits in its folder
    dataset = recorded.dataset(dataset, str(recorded.manifest_path))
    names = {env} if env else {log.steps[0].env_id for log in episodes if log.steps}
    # the manifest names the code (a file's path) where the records name only its id; a run
    # against a served environment (ws://) names the server there, and its records the id
    served = str(recorded.run.get("env") or "").startswith(("ws://", "wss://"))
    from_manifest = env is None and bool(recorded.manifest) and not served
    if from_manifest:
        names = {recorded.env(None, str(recorded.manifest_path))}
    elif env is None:  # the file may name only built-in and installed ids, never code to import
        names = {recorded_env(name, f"{path}") for name in names}
    else:
        recorded.env(env, str(path))  # a --env FILE that is not here: say where the run's is
    handles = {name: open_env(name, dataset) for name in sorted(names)}
    if from_manifest:
        only = next(iter(names))
        handles = {log.steps[0].env_id: handles[only] for log in episodes if log.steps}
    report = asyncio.run(replay_episodes(episodes, lambda env_id: handles[env or env_id].factory()))
    if not report.ok:
        assert report.divergence is not None
        fail(report.divergence.describe(), 1)
    err.print(
        f"replay ok: {plural(report.episodes, 'episode')}, {plural(report.steps, 'step')} "
        "match the record"
    )
    if not check.finished:
        fail(describe_check(check), UNFINISHED_EXIT)


@app.command("verify-log")
@friendly
def verify_log(
    path: Path = typer.Argument(..., help="A run directory or a trajectories.jsonl file."),
    seal_key_file: Path | None = typer.Option(None, "--seal-key-file", help=SEAL_KEY_HELP),
) -> None:
    """Check schema, digest chains and (with a seal key) the seals of every record and run,
    and the run's documents (manifest.json, summary.json, eval.json) against the run seal,
    without re-running anything. Exit 1 names the first bad record or an edited document;
    exit 3 means a sealed file whose records verify but which no run seal closes (an
    interrupted run, or one cut back to an earlier run seal)."""
    check = _checked(path, seal_key_file)
    if not check.finished:
        fail(describe_check(check), UNFINISHED_EXIT)
    run_dir = path if path.is_dir() else path.parent if path.name == TRAJECTORIES else None
    docs = check_documents(run_dir, check) if run_dir is not None else []
    edited = [d.line for d in docs if d.status == "edited"]
    if edited:
        fail("; ".join(edited), 1)
    sealed = [d.name for d in docs if d.trusted]
    line = describe_check(check) + (f"; its run seal covers {', '.join(sealed)}" if sealed else "")
    err.print(line, soft_wrap=True, highlight=False)
    for doc in docs:
        if not doc.trusted:
            err.print(f"[yellow]warning:[/] {doc.line}", soft_wrap=True, highlight=False)


@app.command()
@friendly
def schema(what: str = typer.Argument("trajectory", help="Which schema: trajectory.")) -> None:
    """Print a JSON Schema to stdout."""
    if what != "trajectory":
        raise GymforgeError(f"unknown schema {what!r}; available: trajectory")
    print(json.dumps(trajectory_json_schema(), indent=2))


@app.command("export")
@friendly
def export_cmd(
    source: Path = typer.Argument(..., help="A run directory or a trajectories.jsonl file."),
    fmt: str = typer.Option(..., "--format", "-f", help="trl, sft, parquet or xlsx."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Output file (for xlsx: a directory, default workbooks/)."
    ),
    only_success: bool = typer.Option(False, "--only-success", help="Successful episodes only."),
    max_staleness: int | None = typer.Option(
        None, "--max-staleness", min=0, help="Weight versions a turn may lag the newest."
    ),
    stale: str = typer.Option("refuse", "--stale", help="refuse or flag stale episodes."),
    seal_key_file: Path | None = typer.Option(None, "--seal-key-file", help=SEAL_KEY_HELP),
    allow_unfinished: bool = typer.Option(
        False,
        "--allow-unfinished",
        help="Export a sealed file that no run seal closes (an interrupted or cut run).",
    ),
) -> None:
    """Export training data (trl, sft), a flat step table (parquet), or the spreadsheet
    environment's final workbooks (xlsx: each episode replayed, its workbook written with
    cached formula values). With a seal key the
    file's seals are checked first, and a file that fails them exports nothing; a sealed
    file that no run seal closes (interrupted, or cut) is refused (exit 3) unless
    --allow-unfinished. Nothing is written when the export is refused."""
    choice = one_of("--format", fmt, ("trl", "sft", "parquet", "xlsx"))
    stale_rule: Literal["refuse", "flag"] = one_of("--stale", stale, ("refuse", "flag"))
    path = source / TRAJECTORIES if source.is_dir() else source
    if not path.is_file():
        raise UserError(f"{path} does not exist: give a run directory or a trajectories file")
    if out is not None and choice == "xlsx":
        out_dir(out)
    elif out is not None:
        out_file(out)
    key = load_key(seal_key_file)
    unfinished = None
    if key is not None:
        check = check_file(path, key)
        unfinished = None if check.finished else describe_check(check)
    elif not looks_finished(path):
        unfinished = (
            "log unfinished: the file is sealed but no final run seal closes it (checked "
            "without the seal key: its structure only): the run was interrupted or cut"
        )
    if unfinished is not None:
        if not allow_unfinished:
            fail(f"{unfinished}; pass --allow-unfinished to export it anyway", UNFINISHED_EXIT)
        err.print(f"[yellow]warning:[/] {unfinished}", highlight=False, soft_wrap=True)
    if choice == "xlsx":
        _export_workbooks(path, out or path.parent / WORKBOOKS)
        return
    form: Format = one_of("--format", fmt, ("trl", "sft", "parquet"))
    target = out or export_file(path.parent, fmt)
    report = export(
        path, form, target, only_success=only_success, max_staleness=max_staleness, stale=stale_rule
    )
    if not report.written:  # nothing was written: a refusal of the request, not an integrity
        raise UserError(f"nothing exported: {report.why_nothing(fmt)}")  # failure (that is 1)
    data = report.as_dict()
    err.print(
        f"exported {plural(data['written'], 'episode')} to {target}; refused {data['refused']}; "
        f"flagged stale {data['flagged_stale']}"
    )


def _export_workbooks(path: Path, out: Path) -> None:
    from gymforge.cli.workbooks import final_workbooks, write_workbooks
    from gymforge.trajectory.io import read_episodes

    books, others = asyncio.run(final_workbooks(read_episodes(path)))
    if not books:
        fail(f"no spreadsheet episodes in {path} ({others} of other environments)")
    written = write_workbooks(books, out)
    err.print(f"exported {len(written)} workbooks to {out}; other environments' episodes {others}")
