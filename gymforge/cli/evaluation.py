"""Calibration, evaluation and reports: ``calibrate``, ``eval``, ``report``."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import typer

from gymforge.cli.args import out_file
from gymforge.cli.common import (
    SEAL_KEY_HELP,
    EnvHandle,
    app,
    dataset_note,
    err,
    fail_if_incomplete,
    friendly,
    open_env,
    overwrite_option,
    progress_bar,
    resume_option,
)
from gymforge.cli.harbor_flags import IMAGE_MAP
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
from gymforge.cli.sandbox_flags import SANDBOX, use_sandbox
from gymforge.core.errors import GymforgeError, UserError
from gymforge.evaluate.console import eval_tables
from gymforge.evaluate.episodes import EpisodeStats, load_stats, oracle_path_lengths
from gymforge.evaluate.metrics import group_outcomes
from gymforge.evaluate.pipeline import EvalConfig, eval_tasks, job_stats, write_eval
from gymforge.registry.resolve import HARBOR
from gymforge.rollout.executors import executor_for
from gymforge.rollout.manifest import Command
from gymforge.rollout.output import seal_documents
from gymforge.rollout.plan import prepare
from gymforge.rollout.resolve import resolve_policy, with_harness_shell, with_run_hidden
from gymforge.rollout.runner import run_sync
from gymforge.rollout.spec import RunSpec
from gymforge.trajectory.seal import load_key

POLICY_HELP = "oracle, random, noop, skilled:P, openai:MODEL, vllm:MODEL or package.module:factory."


def env_tasks(handle: EnvHandle) -> Any:
    if handle.tasks is None:
        raise GymforgeError(f"{handle.name} exposes no task source to sample from")
    return handle.tasks


def play_rollouts(
    handle: EnvHandle,
    spec: RunSpec,
    base_url: str | None,
    task_ids: list[str],
    out: Path,
    *,
    resume: bool,
    overwrite: bool,
    quiet: bool,
    command: Command,
    config: dict[str, Any],
    seal_key: bytes | None = None,
    options: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], list[EpisodeStats], str]:
    """Play ``spec.group`` rollouts per task through the runner, with ``out`` checked and a
    manifest written first; return (runner summary, this run's stats, env version).
    ``options`` are policy settings (sampling, token-in)."""
    options = with_harness_shell(with_run_hidden(options or {}, spec.policy, out), handle.factory)
    source = resolve_policy(spec.policy, base_url, **options)
    spec = spec.model_copy(
        update={"tasks": task_ids, "out": out, "resume": resume, "seal_key": seal_key}
    )
    ready = prepare(
        spec,
        policy=source,
        handle=handle,
        guard=True,
        overwrite=overwrite,
        command=command,
        config=config,
    )
    executor = executor_for(ready.spec, handle, source)
    with progress_bar(f"{handle.name}/{spec.policy}", len(task_ids) * spec.group, quiet) as tick:
        result = run_sync(ready.spec, executor, on_episode=tick, on_resumed=tick.resumed)
    for line in result.errors[:5]:
        err.print(f"[yellow]infrastructure error:[/] {line}", highlight=False)
    probe = handle.factory()
    try:
        stats = job_stats(out, task_ids, spec.seed, spec.group, oracle_path_lengths(probe))
    finally:
        asyncio.run(probe.close())
    return result.summary, stats, probe.spec.version


def log_to_wandb(kind: str, data: dict[str, Any], out: Path, project: str | None) -> None:
    from gymforge.evaluate.wandb_log import log_to_wandb

    where = log_to_wandb(
        kind,
        data,
        out_dir=out,
        project=project,
        name=f"{kind}-{data['env']}-{data['policy']}",
        config=data.get("config", {}),
    )
    err.print(f"logged to W&B ({where})")


DEFAULT_EVAL_N = 20
"""Tasks per split when neither -n nor --dataset says."""


def evaluate_run(
    env: str,
    policy: str,
    out: Path,
    *,
    split: str = "train",
    n: int | None = None,
    k: int = 1,
    samples: int | None = None,
    seed: int = 0,
    concurrency: int = 1,
    resume: bool = False,
    overwrite: bool = False,
    dataset: Path | None = None,
    base_url: str | None = None,
    quiet: bool = False,
    seal_key: bytes | None = None,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything ``gymforge eval`` does before printing: returns the ``eval.json`` data.
    With a dataset and no ``n``, every row of the split is evaluated once."""
    handle = open_env(env, dataset)
    families = [d.name for d in handle.datasets] or None
    whole = n is None and (bool(handle.datasets) or env.startswith(HARBOR))  # fixed task lists
    config = EvalConfig(
        env, policy, split, n or DEFAULT_EVAL_N, k, samples or k, seed, families=families
    )
    ids = eval_tasks(env_tasks(handle), config, whole)
    if whole:
        config.n = len(ids)
    if not quiet:
        dataset_note(handle, None if whole else n, len(ids), split, group=config.samples)
    spec = RunSpec(
        env=env,
        policy=policy,
        n=None if whole else config.n,
        seed=seed,
        split=split,  # type: ignore[arg-type]
        group=config.samples,
        dataset=str(dataset) if dataset else None,
        concurrency=concurrency,
    )
    summary, stats, version = play_rollouts(
        handle,
        spec,
        base_url,
        ids,
        out,
        resume=resume,
        overwrite=overwrite,
        quiet=quiet,
        command="eval",
        config=eval_config_record(config),
        seal_key=seal_key,
        options=options,
    )
    data = write_eval(out, config, stats, summary, version)
    seal_documents(out, seal_key)  # the run seal covers eval.json too
    return data


def eval_config_record(config: EvalConfig) -> dict[str, Any]:
    """``config`` as the manifest keeps it (without the run's warnings)."""
    return {k: v for k, v in asdict(config).items() if k != "warnings"}


def evaluate_existing(
    run_dir: Path, env: str, policy: str, *, split: str = "train", k: int = 1
) -> dict[str, Any]:
    """Write ``eval.json`` for a finished run directory (e.g. from ``gymforge run``)
    without playing anything: every finished episode in its trajectory file is analysed."""
    handle = open_env(env)
    probe = handle.factory()
    try:
        stats = load_stats(run_dir / "trajectories.jsonl", oracle_path_lengths(probe))
    finally:
        asyncio.run(probe.close())
    groups = group_outcomes(stats)
    samples = max((len(g) for g in groups.values()), default=1)
    config = EvalConfig(env, policy, split, len(groups), min(k, samples), samples)
    summary_file = run_dir / "summary.json"
    try:
        summary = json.loads(summary_file.read_text()) if summary_file.exists() else None
    except json.JSONDecodeError as e:
        raise UserError(f"{summary_file} is not valid JSON: {e}") from None
    return write_eval(run_dir, config, stats, summary, probe.spec.version)


@app.command("eval")
@friendly
def eval_cmd(
    env: str = typer.Argument(..., help="Environment id or import path (pkg.mod:factory)."),
    policy: str = typer.Option(..., "--policy", "-p", help=POLICY_HELP),
    out: Path = typer.Option(..., "--out", "-o", help="Output directory."),
    split: str = typer.Option("train", "--split", help="train, heldout or all (train+held-out)."),
    k: int = typer.Option(1, "-k", min=1, help="k of pass@k and pass^k."),
    samples: int | None = typer.Option(
        None, "--samples", min=1, help="Rollouts per task (default k; more lowers variance)."
    ),
    n: int | None = typer.Option(
        None,
        "-n",
        min=1,
        help=f"Tasks per split (default {DEFAULT_EVAL_N}; with --dataset or a harbor: path, every "
        "row, and -n "
        "samples rows without replacement).",
    ),
    seed: int = typer.Option(0, "--seed", "-s"),
    concurrency: int = typer.Option(1, "--concurrency", "-c", min=1),
    resume: bool = resume_option(),
    overwrite: bool = overwrite_option(),
    dataset: Path | None = typer.Option(None, "--dataset", help="Evaluate this JSONL dataset."),
    base_url: str | None = typer.Option(
        None, "--base-url", help="Server of openai:/vllm: policies."
    ),
    wandb: bool = typer.Option(False, "--wandb", help="Also log the metrics to W&B."),
    wandb_project: str | None = typer.Option(None, "--wandb-project"),
    as_json: bool = typer.Option(False, "--json", help="Print eval.json to stdout."),
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
    sandbox: str | None = SANDBOX,
    image_map: list[str] | None = IMAGE_MAP,
) -> None:
    """Evaluate a policy: success, pass@k, pass^k, reward components, step efficiency, tool
    errors, truncation, breakdowns, held-out gap, failure reasons and review flags.

    Writes OUT/eval.json, OUT/failures.jsonl and the trajectories. Exits 3 when
    infrastructure failures left episodes unwritten (rerun with --resume)."""
    use_sandbox(sandbox, image_map)
    data = evaluate_run(
        env,
        policy,
        out,
        split=split,
        n=n,
        k=k,
        samples=samples,
        seed=seed,
        concurrency=concurrency,
        resume=resume,
        overwrite=overwrite,
        dataset=dataset,
        base_url=base_url,
        quiet=as_json,
        seal_key=load_key(seal_key_file),
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
    if wandb:
        log_to_wandb("eval", data, out, wandb_project)
    for warning in data["warnings"]:
        err.print(f"[yellow]warning:[/] {warning}", highlight=False)
    if as_json:
        print(json.dumps(data, indent=2))
    else:
        for tbl in eval_tables(data):
            err.print(tbl)
        err.print(f"wrote {out / 'eval.json'}, {out / 'failures.jsonl'} and the trajectories")
    fail_if_incomplete(data["run"], None, "eval.json covers the finished episodes only")


@app.command()
@friendly
def report(
    dirs: list[Path] = typer.Argument(..., help="Run directories (eval and/or calibrate)."),
    out: Path = typer.Option(Path("report.html"), "--out", "-o", help="The HTML file."),
    title: str = typer.Option("gymforge report", "--title"),
    seal_key_file: Path | None = typer.Option(None, "--seal-key-file", help=SEAL_KEY_HELP),
) -> None:
    """Write one self-contained HTML report (inline SVG plots, no JavaScript) comparing the
    runs side by side; a run document that fails its seal or is not sealed is a warning on
    the page and here."""
    from gymforge.evaluate.report import write_report

    out_file(out)

    def warn(line: str) -> None:
        err.print(f"[yellow]warning:[/] {line}", highlight=False, soft_wrap=True)

    path = write_report(dirs, out, title, load_key(seal_key_file), warn)
    err.print(f"wrote {path} ({path.stat().st_size // 1024} KiB, {len(dirs)} runs)")


DEMO_SKILL = "skilled:1=0.9,2=0.6,3=0.25"


def demo_eval_and_report(out: Path, n: int, seed: int, policies: tuple[str, ...]) -> Path:
    """The demo's second half: ``eval.json`` for each scripted run under ``out``, an eval of
    a policy of known skill on training and held-out tasks, and one report over them all."""
    from gymforge.evaluate.report import write_report

    for policy in policies:
        evaluate_existing(out / policy, "ledger", policy)
    data = evaluate_run(
        "ledger",
        DEMO_SKILL,
        out / "eval",
        split="all",
        n=max(4, n // 4),
        k=4,
        seed=seed,
        overwrite=True,
    )
    m = data["metrics"]
    g = m["heldout_gap"]
    err.print(
        f"eval of {DEMO_SKILL} on train + held-out tasks: success {m['success']['rate']:.1%}, "
        f"pass@4 {m['pass@k'].get('4') or 0:.1%}, pass^4 {m['pass^k'].get('4') or 0:.1%}, "
        + (
            f"held-out gap {g['gap']:+.1%} [{g['lo']:+.1%}, {g['hi']:+.1%}]"
            if g["gap"] is not None
            else "held-out gap n/a"
        )
    )
    path = write_report(
        [out / "eval", *(out / p for p in policies)], out / "report.html", "gymforge demo"
    )
    err.print(f"report: {path} (one self-contained HTML file; open it in a browser)")
    return path
