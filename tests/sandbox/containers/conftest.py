"""Container backend fixtures: one two-worker ``DockerBackend`` on the full base image serves
the tests that do not break or reconfigure workers (those start their own, on other uids)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from containers_helpers import READY, UID_BASE, WHY

from gymforge.sandbox.docker import DockerBackend


@pytest.fixture(scope="session")
def docker_sandbox() -> Iterator[DockerBackend]:
    if not READY:
        pytest.skip(WHY)
    backend = DockerBackend(
        workers=2, uid_base=UID_BASE, host_grace=5.0, languages=("c", "cpp", "javascript")
    )
    yield backend
    backend.close()
