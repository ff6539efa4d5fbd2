"""The ``--image-map FROM=LOCAL`` flag of ``run``, ``eval``, ``qa`` and ``replay``, defined once.

A Harbor task's Dockerfile names base images this machine cannot pull (no registry is
reached); the map says which local image stands for each. Like ``--sandbox``, the value is
kept for the whole process and the processes it starts (QA's fresh process) in
``GYMFORGE_HARBOR_IMAGE_MAP`` (``docs/harbor.md``).
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


def use_image_map(entries: list[str] | None) -> None:
    """Apply ``--image-map`` values (none: keep the variable's)."""
    if entries:
        from gymforge.envs.harbor.images import use_image_map as apply

        apply(entries)
