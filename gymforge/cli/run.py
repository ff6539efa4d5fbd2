"""Running episodes: ``list``, ``run``, ``demo``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Literal

import typer
from rich.markup import escape
from rich.table import Table

from gymforge.cli.common import (
    SEAL_KEY_HELP,
    app,
    dataset_note,
    err,
    fail_if_incomplete,
    friendly,
    one_of,
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
from gymforge.cli.sandbox_flags import SANDBOX, use_settings
from gymforge.registry.listing import environment_rows
from gymforge.registry.resolve import HARBOR, make_env
from gymforge.rollout.executors import executor_for
from gymforge.rollout.plan import prepare
from gymforge.rollout.replay import replay_file
from gymforge.rollout.resolve import resolve_policy, with_harness_shell, with_run_hidden
from gymforge.rollout.runner import run_sync
from gymforge.rollout.spec import RunSpec
from gymforge.tasks.source import SplitName
from gymforge.trajectory.seal import load_key
from gymforge.version import __version__
from gymforge.wording import decimal, percent, plural


@app.command("list")
@friendly
def list_envs(as_json: bool = typer.Option(False, "--json", help="Print JSON to stdout.")) -> None:
    """List the built-in and the installed environments (with their package and version),
    their versions and task families; an installed one that cannot load is listed as broken."""
    rows = environment_rows(__version__)
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    table = Table("id", "version", "package", "families", "description")
    for r in rows:
        package = f"{r['package']} {r['package_version']}"
        if r["status"] != "ok":
            table.add_row(r["id"], "-", package, "", f"[bold red]broken[/]: {r['error']}")
            continue
        about = r["description"] + (f" [dim](QA: {escape(r['qa'])})[/]" if r.get("qa") else "")
        table.add_row(r["id"], r["version"], package, ", ".join(r["families"]), about)
    err.print(table)


DEFAULT_N = 10
"""Tasks per run when neither -n nor --dataset says."""


def _run(
    env_name: str,
    policy: str,
    n: int | None,
    seed: int,
    out: Path | None,
    concurrency: int,
    split: str,
    dataset: Path | None = None,
    quiet: bool = False,
    *,
    group: int = 1,
    resume: bool = False,
    episode_timeout: float | None = None,
    max_retries: int = 2,
    base_url: str | None = None,
    backend: str = "local",
    backend_url: str | None = None,
    seal_key: bytes | None = None,
    overwrite: bool = False,
    epochs: int = 1,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run from the command line: ``n=None`` runs every row of ``dataset`` (or
    ``DEFAULT_N`` tasks without one, every task of a ``harbor:`` path); ``out`` is checked
    first (see ``rundir``)."""
    split_name: SplitName = one_of("--split", split, ("train", "heldout", "all"))
    backend_name: Literal["local", "ray", "redis"] = one_of(
        "--backend", backend, ("local", "ray", "redis")
    )
    if n is None and dataset is None and not env_name.startswith(HARBOR):
        n = DEFAULT_N  # a harbor: path is a fixed task list: every task once
    spec = RunSpec(
        env=env_name,
        policy=policy,
        n=n,
        epochs=epochs,
        seed=seed,
        split=split_name,
        group=group,
        dataset=str(dataset) if dataset else None,
        concurrency=concurrency,
        episode_timeout=episode_timeout,
        max_retries=max_retries,
        backend=backend_name,
        out=out,
        resume=resume,
        seal_key=seal_key,
    )
    handle = open_env(env_name, dataset)  # resolve before any progress output
    options = with_run_hidden(options or {}, policy, out)  # here and on every worker
    source = resolve_policy(policy, base_url, **with_harness_shell(options, handle.factory))
    ready = prepare(spec, policy=source, handle=handle, guard=True, overwrite=overwrite)
    task_ids = ready.spec.tasks or []
    if not quiet:
        dataset_note(handle, n, len(task_ids), split, epochs, group)
    executor = executor_for(
        ready.spec,
        handle,
        source,
        backend_url=backend_url,
        policy_options={"base_url": base_url, **options},
    )
    with progress_bar(f"{env_name}/{policy}", len(task_ids) * group * epochs, quiet) as tick:
        result = run_sync(ready.spec, executor, on_episode=tick, on_resumed=tick.resumed)
    return result.summary


def _summary_table(summaries: list[dict[str, Any]]) -> Table:
    table = Table(
        "env",
        "policy",
        "episodes",
        "success",
        "verifier errors",
        "mean reward",
        "terminated",
        "truncated",
        "mean steps",
        "top failure",
    )
    for s in summaries:
        top = next(iter(s["failure_reasons"]), "-")
        table.add_row(
            s["env"],
            s["policy"],
            str(s["episodes"]),
            percent(s["success_rate"]),
            percent(s.get("verifier_error_rate") or 0),
            decimal(s["mean_reward"]),
            str(s["terminated"]),
            str(s["truncated"]),
            f"{s['mean_steps']:.1f}",
            top,
        )
    return table


@app.command()
@friendly
def run(
    env: str = typer.Argument(..., help="Environment id or import path (pkg.mod:factory)."),
    policy: str = typer.Option(
        "oracle",
        "--policy",
        "-p",
        help="oracle, random, noop, skilled:P, recorded:PATH, openai:MODEL, vllm:MODEL or "
        "pkg.mod:factory.",
    ),
    base_url: str | None = typer.Option(
        None, "--base-url", help="OpenAI-compatible server of openai:/vllm: policies."
    ),
    n: int | None = typer.Option(
        None,
        "-n",
        min=1,
        help=f"Number of tasks (default {DEFAULT_N}; with --dataset or a harbor: path, every row "
        "once, and -n "
        "samples rows without replacement).",
    ),
    seed: int = typer.Option(0, "--seed", "-s", help="Seed for task sampling and episodes."),
    out: Path = typer.Option(..., "--out", "-o", help="Output directory."),
    concurrency: int = typer.Option(
        1,
        "--concurrency",
        "-c",
        min=1,
        help="Episodes at once; with --backend redis, across all workers (the sum of their -c).",
    ),
    split: str = typer.Option("train", "--split", help="train, heldout or all."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary JSON to stdout."),
    dataset: Path | None = typer.Option(None, "--dataset", help="Run this JSONL dataset's tasks."),
    group: int = typer.Option(1, "--group", "-g", min=1, help="Rollouts per task (GRPO group)."),
    epochs: int = typer.Option(
        1, "--epochs", min=1, help="Passes over the tasks; epoch e plays rollouts e*G..e*G+G-1."
    ),
    resume: bool = resume_option(),
    overwrite: bool = overwrite_option(),
    episode_timeout: float | None = typer.Option(
        None,
        "--episode-timeout",
        min=0.001,
        help="Seconds; over it an episode fails (episode_timeout), retried if nothing acted.",
    ),
    max_retries: int = typer.Option(2, "--max-retries", min=0, help="Retries of failed episodes."),
    backend: str = typer.Option("local", "--backend", help="local, ray or redis."),
    redis_url: str | None = typer.Option(
        None, "--redis", envvar="GYMFORGE_REDIS_URL", help="Redis URL for --backend redis."
    ),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="Ray cluster for --backend ray (default: local)."
    ),
    token: str | None = typer.Option(None, "--token", help="Bearer token of a ws:// env."),
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
    """Run N tasks x G rollouts; write OUT/trajectories.jsonl and OUT/summary.json. Exits 3
    if infrastructure failures (a dead policy server, say) left episodes unwritten: they are
    never scored, and rerunning with --resume runs just those. With a seal key every record
    and the finished run are sealed (HMAC-SHA256; see docs/reproducibility.md)."""
    use_settings(
        sandbox=sandbox, token=token or None, image_map=image_map
    )  # the ws:// client gets the token
    summary = _run(
        env,
        policy,
        n,
        seed,
        out,
        concurrency,
        split,
        dataset,
        group=group,
        resume=resume,
        episode_timeout=episode_timeout,
        max_retries=max_retries,
        base_url=base_url,
        backend=backend,
        backend_url=redis_url if backend == "redis" else ray_address,
        seal_key=load_key(seal_key_file),
        overwrite=overwrite,
        epochs=epochs,
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
    if as_json:
        print(json.dumps(summary, indent=2))
    else:
        err.print(_summary_table([summary]))
        err.print(f"wrote {out / 'trajectories.jsonl'} and {out / 'summary.json'}")
    total = sum(summary.get(k) or 0 for k in ("episodes", "unscored", "infra_errors"))
    fail_if_incomplete(summary, total, "the summary covers the finished episodes only")


@app.command()
@friendly
def demo(
    out: Path = typer.Option(Path("runs/demo"), "--out", "-o", help="Output directory."),
    n: int = typer.Option(40, "-n", min=1, help="Tasks per policy."),
    seed: int = typer.Option(0, "--seed", "-s"),
) -> None:
    """The quickstart: the reference environment under the three scripted policies, an
    eval of a policy of known skill (train and held-out), and an HTML report of them all."""
    summaries = []
    for policy in ("oracle", "random", "noop"):  # a fresh start each time: make demo reruns
        summaries.append(_run("ledger", policy, n, seed, out / policy, 1, "train", overwrite=True))
    err.print(_summary_table(summaries))
    report = asyncio.run(replay_file(out / "oracle" / "trajectories.jsonl", make_env))
    err.print(
        f"replay of the oracle run: {'ok' if report.ok else 'DIVERGED'} "
        f"({plural(report.episodes, 'episode')}, {plural(report.steps, 'step')})"
    )
    err.print(f"trajectories and summaries under {out}/{{oracle,random,noop}}/")
    from gymforge.cli.evaluation import demo_eval_and_report

    demo_eval_and_report(out, n, seed, ("oracle", "random", "noop"))
    if not report.ok:
        raise typer.Exit(1)


@app.command()
@friendly
def worker(
    redis: str = typer.Option(..., "--redis", envvar="GYMFORGE_REDIS_URL", help="Redis URL."),
    concurrency: int = typer.Option(
        1, "--concurrency", "-c", min=1, help="Episodes this worker plays at once."
    ),
    reclaim_idle: float = typer.Option(
        60.0, "--reclaim-idle", help="Seconds before a dead worker's tasks are taken over."
    ),
    max_reclaims: int = typer.Option(
        2,
        "--max-reclaims",
        min=0,
        help="Takeovers of one task whose workers died; the next worker gives it up.",
    ),
) -> None:
    """Process --backend redis episodes until interrupted (SIGINT/SIGTERM finish in-flight).

    A task whose own code raises is that task's result (a bug stops the run with its
    traceback, as on the local backend); a task whose workers die each time they take it
    is given up after --max-reclaims takeovers.

    Workers never need the seal key: the coordinator (`gymforge run --backend redis`) is the
    only writer of the trajectories, and it seals them."""
    from gymforge.rollout.executors.redis_serve import worker_main

    use_settings()  # this worker's own settings (its environment), for its whole life
    n = worker_main(
        redis,
        concurrency,
        reclaim_idle_ms=int(reclaim_idle * 1000),
        max_reclaims=max_reclaims,
    )
    err.print(f"processed {plural(n, 'task')}")
