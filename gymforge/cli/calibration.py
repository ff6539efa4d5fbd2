"""``gymforge calibrate``: measure pass rates per task, keep the tasks in a band, and write
the calibrated task list with its report (``gymforge.calibrate``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from gymforge.cli.common import (
    SEAL_KEY_HELP,
    app,
    dataset_note,
    err,
    fail_if_incomplete,
    friendly,
    open_env,
    overwrite_option,
    resume_option,
)
from gymforge.cli.evaluation import POLICY_HELP, env_tasks, log_to_wandb, play_rollouts
from gymforge.cli.grade import near_limit_tasks, say_near_limit
from gymforge.cli.policy_flags import (
    HARNESS_GRACE,
    HARNESS_MODE,
    HARNESS_MODEL,
    HARNESS_PATH,
    HARNESS_TIME_LIMIT,
    MAX_TOKENS,
    TEMPERATURE,
    TOKENIZER,
    TOOL_FORMAT,
    TOP_P,
    policy_options,
)
from gymforge.rollout.output import seal_documents
from gymforge.rollout.spec import RunSpec
from gymforge.trajectory.seal import load_key
from gymforge.wording import plural

DEFAULT_CALIBRATE_N = 50
"""Training tasks calibrated when neither -n, --tasks nor --dataset says."""


@app.command()
@friendly
def calibrate(
    env: str = typer.Argument(..., help="Environment id or import path (pkg.mod:factory)."),
    policy: str = typer.Option(..., "--policy", "-p", help=POLICY_HELP),
    samples: int = typer.Option(8, "--samples", "-K", min=1, help="Rollouts per task."),
    out: Path = typer.Option(..., "--out", "-o", help="Output directory."),
    band: str = typer.Option("0.02,0.70", "--band", help="Target pass-rate band LO,HI."),
    n: int | None = typer.Option(
        None,
        "-n",
        min=1,
        help=f"Training tasks to sample (default {DEFAULT_CALIBRATE_N}; with --dataset, every "
        "training row, and -n samples rows without replacement).",
    ),
    tasks: Path | None = typer.Option(
        None, "--tasks", help="Calibrate these task ids (one a line, or a calibrated.jsonl)."
    ),
    seed: int = typer.Option(0, "--seed", "-s"),
    concurrency: int = typer.Option(1, "--concurrency", "-c", min=1),
    resume: bool = resume_option("rollouts"),
    overwrite: bool = overwrite_option(),
    dataset: Path | None = typer.Option(None, "--dataset", help="Calibrate a JSONL dataset."),
    base_url: str | None = typer.Option(
        None, "--base-url", help="Server of openai:/vllm: policies."
    ),
    variants: int = typer.Option(
        5, "--variants", min=0, help="Grow hard-negative variants of this many hardest tasks."
    ),
    wandb: bool = typer.Option(False, "--wandb", help="Also log the results to W&B."),
    wandb_project: str | None = typer.Option(None, "--wandb-project"),
    as_json: bool = typer.Option(False, "--json", help="Print the results (no rows) to stdout."),
    seal_key_file: Path | None = typer.Option(None, "--seal-key-file", help=SEAL_KEY_HELP),
    max_tokens: int | None = MAX_TOKENS,
    temperature: float | None = TEMPERATURE,
    top_p: float | None = TOP_P,
    tokenizer: str | None = TOKENIZER,
    tool_format: str | None = TOOL_FORMAT,
    harness_time_limit: float | None = HARNESS_TIME_LIMIT,
    harness_grace: float | None = HARNESS_GRACE,
    harness_model: str | None = HARNESS_MODEL,
    harness_path: list[str] | None = HARNESS_PATH,
    harness_mode: str | None = HARNESS_MODE,
) -> None:
    """Estimate per-task pass rates (Wilson CIs) from K rollouts each; keep the tasks inside
    the band, retire the rest with reasons, and feed the curriculum and hard-negative pool.

    Exits 0 even when no task lands in the band (with a warning saying why); exits 3 when
    infrastructure failures left rollouts unwritten (rerun with --resume)."""
    from gymforge.calibrate import Band, CalibrateConfig, select_tasks, write_calibration

    handle = open_env(env, dataset)
    families = [d.name for d in handle.datasets] or None
    whole = n is None and bool(handle.datasets) and tasks is None
    config = CalibrateConfig(
        env,
        policy,
        samples,
        Band.parse(band),
        n or DEFAULT_CALIBRATE_N,
        seed,
        spawn_top=variants,
        families=families,
        task_file=None if tasks is None else str(tasks),
    )
    source = env_tasks(handle)
    if handle.datasets and tasks is None:
        train_ids = source.dataset_rows("train", families, None if whole else n, seed)
        held_ids: list[str] = []
        config.n = len(train_ids)
        if not as_json:
            dataset_note(handle, None if whole else n, len(train_ids), "train", group=samples)
    else:
        train_ids, held_ids = select_tasks(source, config)
    spec = RunSpec(
        env=env,
        policy=policy,
        n=None if whole else max(1, len(train_ids)) if tasks is not None else config.n,
        seed=seed,
        group=samples,
        dataset=str(dataset) if dataset else None,
        concurrency=concurrency,
    )
    summary, stats, _ = play_rollouts(
        handle,
        spec,
        base_url,
        train_ids,
        out,
        resume=resume,
        overwrite=overwrite,
        quiet=as_json,
        command="calibrate",
        config=config.as_dict(),
        seal_key=(key := load_key(seal_key_file)),
        options=policy_options(
            max_tokens,
            temperature,
            top_p,
            tokenizer,
            tool_format,
            harness_time_limit,
            harness_grace,
            harness_model,
            harness_path,
            harness_mode,
        ),
    )
    data = write_calibration(out, config, stats, source, train_ids, held_ids, summary)
    seal_documents(out, key)
    if wandb:
        log_to_wandb("calibration", data, out, wandb_project)
    for warning in data["warnings"]:
        err.print(f"[yellow]warning:[/] {warning}", highlight=False)
    slow = near_limit_tasks(out / "trajectories.jsonl")
    if as_json:
        shown = {k: v for k, v in data.items() if k != "rows"}
        print(json.dumps({**shown, **({"near_time_limit": slow} if slow else {})}, indent=2))
    else:
        _calibration_tables(data, config, env, policy, samples, out)
        say_near_limit(slow)
    fail_if_incomplete(
        summary, len(train_ids) * samples, "the pass rates count the finished rollouts only"
    )


def _calibration_tables(
    data: dict[str, Any], config: Any, env: str, policy: str, samples: int, out: Path
) -> None:
    tbl = Table("status", "tasks", title=f"gymforge calibrate {env} / {policy} (K={samples})")
    tbl.add_row(f"in band [{config.band.lo:g}, {config.band.hi:g}]", str(data["in_band"]))
    for reason, count in data["retired_by_reason"].items():
        if count:
            tbl.add_row(f"retired: {reason}", str(count))
    err.print(tbl)
    if data["episodes"]:
        err.print(
            f"verifier errors: {data['verifier_errors']} of {data['episodes']} rollouts "
            f"({data['verifier_error_rate']:.1%}), counted as failed rollouts"
            + (f"; {data['unscored']} unscored" if data["unscored"] else "")
        )
    zv, cur = data["zero_variance"], data["curriculum"]
    err.print(
        f"zero-variance groups: {zv['groups']} ({zv['all_failed']} all failed, "
        f"{zv['all_succeeded']} all succeeded)"
    )
    for move in cur["moves"]:
        err.print(
            f"curriculum: {move['family']} level {move['from']} -> {move['to']} "
            f"(pass rate {move['pass_rate']:.2f} over {move['n']})"
        )
    err.print(f"curriculum suggested levels: {cur['suggested_levels']}")
    pool = data["hard_negatives"]
    err.print(
        f"hard-negative pool: {plural(pool['tasks'], 'task')} "
        f"({plural(pool['variants_added'], 'variant')}) "
        f"in {pool['path']}"
    )
    err.print(f"wrote {out}/calibration.json, calibrated.jsonl, retired.jsonl")
