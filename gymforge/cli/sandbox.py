"""The sandbox for untrusted code: ``sandbox doctor``."""

from __future__ import annotations

import typer

from gymforge.cli.common import app
from gymforge.sandbox.doctor import doctor_cli

sandbox_app = typer.Typer(no_args_is_help=True, help="The sandbox for untrusted code.")
app.add_typer(sandbox_app, name="sandbox")


@sandbox_app.command("doctor")
def sandbox_doctor(
    as_json: bool = typer.Option(False, "--json", help="Print JSON to stdout."),
) -> None:
    """Report which isolation works on this machine (bubblewrap, namespaces, seccomp,
    cgroups, languages); exit 0 only if an isolated sandbox is available."""
    raise typer.Exit(doctor_cli(as_json=as_json))
