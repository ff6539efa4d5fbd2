"""Shared by the container backend's tests (a plain module on ``sys.path``): the marker that
keeps them out of the default suite, the skip reason where no engine is set up, and uids."""

from __future__ import annotations

import os

import pytest

from gymforge.sandbox.docker import docker_available
from gymforge.sandbox.docker_engine import IMAGE_FULL, IMAGE_PYTHON, engine, run_engine

ENGINE_OK, ENGINE_WHY = docker_available()

# Distinct from the other test packages' sandbox uids (tests/sandbox +0..+71, redteam +44/+90)
UID_BASE = 100_000 + (os.getpid() % 5000) * 100 + 72


def _images_ok() -> tuple[bool, str]:
    if not ENGINE_OK:
        return False, f"no container engine here ({ENGINE_WHY})"
    for image in (IMAGE_PYTHON, IMAGE_FULL):
        if run_engine(engine().cli, "image", "exists", image).returncode != 0:
            return False, f"image {image} is missing; run `make containers`"
    return True, ""


READY, WHY = _images_ok()
CONTAINERS = [pytest.mark.containers, pytest.mark.skipif(not READY, reason=WHY)]
