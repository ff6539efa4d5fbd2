"""Trajectory files: ``replay``, ``verify-log``, ``schema``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import typer

from gymforge.cli.common import app, err, fail, friendly, open_env
from gymforge.core.errors import GymforgeError
from gymforge.trajectory.io import read_episodes, verify_chain
from gymforge.trajectory.replay import replay_episodes
from gymforge.trajectory.schema import trajectory_json_schema


@app.command()
@friendly
def replay(
    path: Path = typer.Argument(..., help="A trajectories.jsonl file."),
    env: str | None = typer.Option(None, "--env", help="Override the environment to replay on."),
    dataset: Path | None = typer.Option(None, "--dataset", help="The dataset the run used."),
) -> None:
    """Re-run every episode from its task id, seed and actions; exit 0 only if all match."""
    episodes = read_episodes(path)
    names = {env} if env else {log.steps[0].env_id for log in episodes if log.steps}
    handles = {name: open_env(name, dataset) for name in sorted(names)}
    report = asyncio.run(replay_episodes(episodes, lambda env_id: handles[env or env_id].factory()))
    if not report.ok:
        assert report.divergence is not None
        fail(report.divergence.describe(), 1)
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
