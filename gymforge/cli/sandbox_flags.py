"""The ``--sandbox`` flag of ``grade``, ``run``, ``eval``, ``qa`` and ``serve``, defined once
(``reproduce`` has its own, defaulting to the sandbox the run recorded).

It chooses the backend untrusted code runs in (``local``: bubblewrap on this host, the
default; ``docker``: long-lived containers of podman or another Docker-compatible engine) by
setting ``GYMFORGE_SANDBOX`` for the whole process, which is where every component reads it.
"""

from __future__ import annotations

from typing import Any

import typer

from gymforge.sandbox.selection import SANDBOX_ENV, select_kind

SANDBOX: Any = typer.Option(
    None,
    "--sandbox",
    help=f"Sandbox backend for untrusted code: local (bubblewrap) or docker (podman/Docker "
    f"containers; set up with `make containers`). Default: ${SANDBOX_ENV}, else local.",
)


def use_sandbox(kind: str | None) -> None:
    """Apply a ``--sandbox`` value (``None``: keep ``GYMFORGE_SANDBOX``'s choice)."""
    select_kind(kind)
