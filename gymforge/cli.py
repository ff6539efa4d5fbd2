"""The ``gymforge`` command line. Machine-readable output goes to stdout alone; logs,
progress and tables go to stderr. User mistakes print one line, never a traceback."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from gymforge.core.errors import GymforgeError, IntegrityError
from gymforge.envs.registry import BUILTIN, make_env
from gymforge.rollout.runner import run as run_jobs
from gymforge.rollout.scripted import scripted_policy
from gymforge.tasks.source import TaskSource
from gymforge.trajectory.io import read_episodes, verify_chain
from gymforge.trajectory.replay import replay_file
from gymforge.trajectory.schema import trajectory_json_schema

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="gymforge: seeded, verifiable, QA-checked RL environments for LLMs.",
)
err = Console(stderr=True, width=None if sys.stderr.isatty() else 120)


def _fail(message: str, code: int = 2) -> None:
    err.print(Text.assemble(("error:", "bold red"), " ", message), highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def friendly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn gymforge errors and bad files into one readable line and exit code 2."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except IntegrityError as e:
            _fail(f"integrity check failed: {e}", 1)
        except (GymforgeError, FileNotFoundError, IsADirectoryError, PermissionError) as e:
            _fail(str(e))
        except ValueError as e:
            _fail(str(e))

    return wrapper


def _task_source(env: Any) -> TaskSource | None:
    tasks = getattr(env, "tasks", None)
    return tasks if isinstance(tasks, TaskSource) else None


@app.command("list")
@friendly
def list_envs(as_json: bool = typer.Option(False, "--json", help="Print JSON to stdout.")) -> None:
    """List the built-in environments with their versions and task families."""
    rows = []
    for env_id in sorted(BUILTIN):
        env = make_env(env_id)
        tasks = _task_source(env)
        rows.append(
            {
                "id": env.spec.id,
                "version": env.spec.version,
                "renderer_version": env.spec.renderer_version,
                "description": env.spec.description,
                "families": sorted(tasks.families) if tasks else [],
            }
        )
        asyncio.run(env.close())
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    table = Table("id", "version", "families", "description")
    for r in rows:
        table.add_row(r["id"], r["version"], ", ".join(r["families"]), r["description"])
    err.print(table)


def _run(
    env_name: str,
    policy: str,
    n: int,
    seed: int,
    out: Path | None,
    concurrency: int,
    split: str,
    quiet: bool = False,
) -> dict[str, Any]:
    probe = make_env(env_name)
    tasks = _task_source(probe)
    asyncio.run(probe.close())
    if tasks is None:
        raise GymforgeError(f"{env_name} exposes no task source to sample from")
    if split not in ("train", "heldout", "all"):
        raise GymforgeError(f"--split must be train, heldout or all, not {split!r}")
    jobs = [(task_id, seed) for task_id in tasks.sample(n, seed, split)]  # type: ignore[arg-type]
    policy_factory = scripted_policy(policy)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("success {task.fields[rate]:.0%}"),
        TimeElapsedColumn(),
        console=err,
        disable=quiet,
        transient=False,
    ) as progress:
        bar = progress.add_task(f"{env_name}/{policy}", total=len(jobs), rate=0.0)
        wins = [0, 0]

        def tick(episode: dict[str, Any]) -> None:
            wins[0] += episode["success"]
            wins[1] += 1
            progress.update(bar, advance=1, rate=wins[0] / wins[1])

        result = asyncio.run(
            run_jobs(
                lambda: make_env(env_name),
                policy_factory,
                jobs,
                out,
                concurrency=concurrency,
                on_episode=tick,
                summary_extra={"env": env_name, "policy": policy, "seed": seed, "split": split},
            )
        )
    return result.summary


def _summary_table(summaries: list[dict[str, Any]]) -> Table:
    table = Table(
        "env",
        "policy",
        "episodes",
        "success",
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
            f"{s['success_rate']:.1%}",
            f"{s['mean_reward']:.3f}",
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
    policy: str = typer.Option("oracle", "--policy", "-p", help="oracle, random or noop."),
    n: int = typer.Option(10, "-n", min=1, help="Number of tasks (one episode each)."),
    seed: int = typer.Option(0, "--seed", "-s", help="Seed for task sampling and episodes."),
    out: Path = typer.Option(..., "--out", "-o", help="Output directory."),
    concurrency: int = typer.Option(1, "--concurrency", "-c", min=1),
    split: str = typer.Option("train", "--split", help="train, heldout or all."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary JSON to stdout."),
) -> None:
    """Run N episodes and write OUT/trajectories.jsonl and OUT/summary.json."""
    summary = _run(env, policy, n, seed, out, concurrency, split)
    if as_json:
        print(json.dumps(summary, indent=2))
    else:
        err.print(_summary_table([summary]))
        err.print(f"wrote {out / 'trajectories.jsonl'} and {out / 'summary.json'}")


@app.command()
@friendly
def replay(
    path: Path = typer.Argument(..., help="A trajectories.jsonl file."),
    env: str | None = typer.Option(None, "--env", help="Override the environment to replay on."),
) -> None:
    """Re-run every episode from its task id, seed and actions; exit 0 only if all match."""
    report = asyncio.run(replay_file(path, lambda env_id: make_env(env or env_id)))
    if not report.ok:
        assert report.divergence is not None
        _fail(report.divergence.describe(), 1)
    err.print(f"replay ok: {report.episodes} episodes, {report.steps} steps match the record")


@app.command("verify-log")
@friendly
def verify_log(path: Path = typer.Argument(..., help="A trajectories.jsonl file.")) -> None:
    """Check schema and digest chain of every episode without re-running anything."""
    episodes = read_episodes(path)
    for log in episodes:
        verify_chain(log)
    err.print(
        f"log ok: {len(episodes)} episodes, "
        f"{sum(len(e.steps) for e in episodes)} step records, digest chains intact"
    )


@app.command()
@friendly
def schema(what: str = typer.Argument("trajectory", help="Which schema: trajectory.")) -> None:
    """Print a JSON Schema to stdout."""
    if what != "trajectory":
        raise GymforgeError(f"unknown schema {what!r}; available: trajectory")
    print(json.dumps(trajectory_json_schema(), indent=2))


@app.command()
@friendly
def qa(
    env: str = typer.Argument(..., help="Environment id or import path (pkg.mod:factory)."),
    episodes: int = typer.Option(24, "--episodes", "-e", min=2, help="Episodes per sample."),
    seed: int = typer.Option(0, "--seed", "-s"),
    policy: str | None = typer.Option(None, "--policy", help="Audit success rates of this policy."),
    check: list[str] = typer.Option(None, "--check", help="Run only these checks."),
    as_json: bool = typer.Option(False, "--json", help="Print the JSON report to stdout."),
    report: Path | None = typer.Option(None, "--report", help="Also write the JSON report here."),
) -> None:
    """Run the ten QA checks; exit 0 only if every check passes."""
    from gymforge.qa import QAOptions, QATarget, run_qa
    from gymforge.qa.profile import CHECK_NAMES

    unknown = sorted(set(check or []) - set(CHECK_NAMES))
    if unknown:
        raise GymforgeError(f"unknown checks {unknown}; checks: {', '.join(CHECK_NAMES)}")
    if policy is not None:
        scripted_policy(policy)
    target = QATarget.load(env)
    table = Table("check", "result", "seconds", "details", title=f"gymforge qa {env}")

    def show(result: Any) -> None:
        mark = (
            ("[green]pass[/]" if result.passed else "[bold red]FAIL[/]")
            if result.applicable
            else "[yellow]n/a[/]"
        )
        if not as_json:
            err.print(f"{mark:>20}  {result.name}", highlight=False)
        table.add_row(result.name, mark, f"{result.seconds:.2f}", result.details)

    outcome = run_qa(
        target,
        QAOptions(episodes=episodes, seed=seed, policy=policy),
        only=check or None,
        on_result=show,
    )
    data = outcome.as_json()
    if report is not None:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(json.dumps(data, indent=2) + "\n")
    if as_json:
        print(json.dumps(data, indent=2))
    else:
        err.print(table)
        failed = [c.name for c in outcome.checks if not c.passed]
        err.print(
            f"{env} {target.spec.version}: "
            + ("all checks passed" if not failed else f"{len(failed)} failed: {', '.join(failed)}")
        )
    if not outcome.passed:
        raise typer.Exit(1)


@app.command()
@friendly
def new(
    name: str = typer.Argument(..., help="Environment name (a lowercase identifier)."),
    directory: Path = typer.Option(Path("."), "--dir", "-d", help="Where to write the files."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing files."),
) -> None:
    """Write a one-file environment NAME.py and its QA test test_NAME.py."""
    from gymforge.scaffold import class_name, scaffold

    written = scaffold(name, directory, force)
    for path in written:
        err.print(f"wrote {path}")
    err.print(f"next: gymforge qa {written[0]}:{class_name(name)}")


@app.command()
@friendly
def demo(
    out: Path = typer.Option(Path("runs/demo"), "--out", "-o", help="Output directory."),
    n: int = typer.Option(40, "-n", min=1, help="Tasks per policy."),
    seed: int = typer.Option(0, "--seed", "-s"),
) -> None:
    """The quickstart: the reference environment under the three scripted policies."""
    summaries = []
    for policy in ("oracle", "random", "noop"):
        summaries.append(_run("ledger", policy, n, seed, out / policy, 1, "train"))
    err.print(_summary_table(summaries))
    report = asyncio.run(replay_file(out / "oracle" / "trajectories.jsonl", make_env))
    err.print(
        f"replay of the oracle run: {'ok' if report.ok else 'DIVERGED'} "
        f"({report.episodes} episodes, {report.steps} steps)"
    )
    err.print(f"trajectories and summaries under {out}/{{oracle,random,noop}}/")
    if not report.ok:
        raise typer.Exit(1)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()
