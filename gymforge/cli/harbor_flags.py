"""The ``--image-map FROM=LOCAL`` flag of ``run``, ``eval``, ``qa`` and ``replay``, defined once.

A Harbor task's Dockerfile names base images this machine cannot pull (no registry is
reached); the map says which local image stands for each. Like ``--sandbox``, it is part of
the command's ``Settings`` (``use_settings(image_map=...)``, over
``$GYMFORGE_HARBOR_IMAGE_MAP``), handed to the processes it starts explicitly
(``docs/harbor.md``).
"""

from __future__ import annotations

from typing import Any

import typer

IMAGE_MAP: Any = typer.Option(
    None,
    "--image-map",
    help="For harbor: environments, build FROM on the local image LOCAL (FROM=LOCAL; "
    "repeatable). Default: $GYMFORGE_HARBOR_IMAGE_MAP.",
)
