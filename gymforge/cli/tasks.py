"""``gymforge tasks export``: gymforge tasks written out in another framework's format."""

from __future__ import annotations

from pathlib import Path

import typer

from gymforge.cli.common import app, err, friendly, open_env
from gymforge.core.errors import UserError

tasks_app = typer.Typer(no_args_is_help=True, help="Tasks in other formats: export.")
app.add_typer(tasks_app, name="tasks")


@tasks_app.command("export")
@friendly
def export(
    env: str = typer.Argument(..., help="Environment id (swe, code or code-agent)."),
    fmt: str = typer.Option("harbor", "--format", help="Output format: harbor."),
    out: Path = typer.Option(..., "--out", "-o", help="Directory to write the tasks into."),
    n: int = typer.Option(10, "-n", min=1, help="Number of tasks."),
    split: str = typer.Option("train", "--split", help="train or heldout."),
    seed: int = typer.Option(0, "--seed", "-s", help="Seed for task sampling."),
    dataset: Path | None = typer.Option(
        None, "--dataset", help="Export this dataset's tasks (its first N rows of the split)."
    ),
) -> None:
    """Write N tasks of ENV as Harbor task directories under OUT (one directory per task,
    named after its task id; `harbor:OUT` reads them back). Prints the directories written."""
    from gymforge.integrations.harbor_export import EXPORTERS, export_tasks, refusal

    if fmt != "harbor":
        raise UserError(f"--format {fmt!r}: the one format is harbor")
    if split not in ("train", "heldout"):
        raise UserError(f"--split {split!r}: use train or heldout")
    if env not in EXPORTERS:
        raise UserError(refusal(env))
    handle = open_env(env, dataset)
    if handle.datasets:
        tasks = [t for t in handle.datasets[0].tasks if t.split == split][:n]
        if not tasks:
            raise UserError(f"{dataset}: no {split} task to export")
    else:
        if handle.tasks is None:
            raise UserError(f"{env} exposes no task source")
        ids = handle.tasks.sample(n, seed, split)  # type: ignore[arg-type]
        tasks = [handle.tasks.resolve(i) for i in ids]
    written = export_tasks(env, tasks, out)
    for path in written:
        print(path)
    err.print(f"wrote {len(written)} Harbor task(s) under {out}", markup=False)
