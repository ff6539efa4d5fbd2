"""Shared by the container backend's tests (a plain module on ``sys.path``): the marker that
keeps them out of the default suite, the skip reason where no engine is set up, and uids."""

from __future__ import annotations

import os

import pytest

from gymforge.sandbox.docker import docker_available
from gymforge.sandbox.docker_engine import IMAGE_FULL, IMAGE_PYTHON
from gymforge.testing.containers import engine_ready

ENGINE_OK, ENGINE_WHY = docker_available()

# Distinct from the other test packages' sandbox uids (tests/sandbox +0..+71, redteam +44/+90)
UID_BASE = 100_000 + (os.getpid() % 5000) * 100 + 72


READY, WHY = engine_ready((IMAGE_PYTHON, IMAGE_FULL))
CONTAINERS = [pytest.mark.containers, pytest.mark.skipif(not READY, reason=WHY)]
