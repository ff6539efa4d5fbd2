"""Whether the container engine the ``docker`` sandbox backend and ``harbor:`` drive is ready
here: for tests and scripts that need it to skip with the reason when it is not."""

from __future__ import annotations

from collections.abc import Iterable

from gymforge.sandbox.docker import docker_available
from gymforge.sandbox.docker_engine import IMAGE_PYTHON, engine, run_engine


def engine_ready(images: Iterable[str] = (IMAGE_PYTHON,)) -> tuple[bool, str]:
    """``(True, "")`` when an engine answers and every image in ``images`` exists locally;
    else ``(False, why)``, naming the fix (``make containers``)."""
    ok, why = docker_available()
    if not ok:
        return False, f"no container engine here ({why})"
    for image in images:
        if run_engine(engine().cli, "image", "exists", image).returncode != 0:
            return False, f"image {image} is missing; run `make containers`"
    return True, ""
