"""The sandbox for untrusted code: ``sandbox doctor``."""

from __future__ import annotations

import typer

from gymforge.cli.common import app, friendly
from gymforge.cli.sandbox_flags import SANDBOX, use_sandbox
from gymforge.sandbox.docker_doctor import docker_doctor_cli
from gymforge.sandbox.doctor import doctor_cli

sandbox_app = typer.Typer(no_args_is_help=True, help="The sandbox for untrusted code.")
app.add_typer(sandbox_app, name="sandbox")


@sandbox_app.command("doctor")
@friendly
def sandbox_doctor(
    as_json: bool = typer.Option(False, "--json", help="Print JSON to stdout."),
    sandbox: str | None = SANDBOX,
) -> None:
    """Report which isolation works on this machine (bubblewrap, namespaces, seccomp,
    cgroups, languages; with --sandbox docker: the container engine, its images and the
    limits it enforces); exit 0 only if the selected sandbox is available."""
    if use_sandbox(sandbox).sandbox == "docker":
        raise typer.Exit(docker_doctor_cli(as_json=as_json))
    raise typer.Exit(doctor_cli(as_json=as_json))
