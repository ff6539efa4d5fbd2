"""The ``--sandbox`` flag of ``grade``, ``run``, ``eval``, ``qa`` and ``serve``, defined once
(``reproduce`` has its own, defaulting to the sandbox the run recorded), and the one way a
command turns its flags into the run's :class:`~gymforge.settings.Settings`.

``--sandbox`` chooses the backend untrusted code runs in (``local``: bubblewrap on this host,
the default; ``docker``: long-lived containers of podman or another Docker-compatible engine).
The command's flags override what the environment says (``Settings.from_environ``, read once
here); the settings go to the :class:`~gymforge.verify.services.RunServices` the command owns
for its whole run, and are returned for the command to pass on. Nothing is written to
``os.environ``.
"""

from __future__ import annotations

import atexit
from typing import Any

import typer

from gymforge.settings import SANDBOX_ENV, Settings, parse_image_map
from gymforge.verify.services import RunServices

SANDBOX: Any = typer.Option(
    None,
    "--sandbox",
    help=f"Sandbox backend for untrusted code: local (bubblewrap) or docker (podman/Docker "
    f"containers; set up with `make containers`). Default: ${SANDBOX_ENV}, else local.",
)


def use_settings(
    *,
    sandbox: str | None = None,
    token: str | None = None,
    unsafe_no_isolation: bool = False,
    image_map: list[str] | None = None,
) -> Settings:
    """The command's settings: its flags (``None``/``False``: not given) over the process
    environment (``--image-map`` entries add to ``$GYMFORGE_HARBOR_IMAGE_MAP``'s). Starts the
    command's ``RunServices`` with them, active until the command ends (then closed)."""
    base = Settings.from_environ()
    mapped = None
    if image_map:
        mapped = tuple(
            {**dict(base.image_map), **dict(parse_image_map(",".join(image_map)))}.items()
        )
    settings = base.with_(
        sandbox=sandbox,
        token=token,
        unsafe_no_isolation=True if unsafe_no_isolation else None,
        image_map=mapped,
    )
    services = RunServices(settings)
    services.__enter__()
    _OPENED.append(services)
    return settings


_OPENED: list[RunServices] = []
"""The services of the command running now; the root command closes them when it ends."""


@atexit.register
def close_command_services() -> None:
    """End the services ``use_settings`` started (the app's root callback calls this when the
    command ends; at exit for a caller outside the app)."""
    while _OPENED:
        _OPENED.pop().__exit__(None, None, None)


def use_sandbox(kind: str | None, image_map: list[str] | None = None) -> Settings:
    """``use_settings`` with just a ``--sandbox`` value (``None``: ``GYMFORGE_SANDBOX``'s) and
    any ``--image-map`` entries."""
    return use_settings(sandbox=kind, image_map=image_map)
