"""Sandbox fixtures. One two-worker ``LocalBackend`` serves every sandbox test (starting one
costs ~0.3 s); tests that break or reconfigure workers start their own, on other uids."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sandbox_helpers import UID_BASE

from gymforge.sandbox.doctor import bwrap_works
from gymforge.sandbox.local import LocalBackend


@pytest.fixture(scope="session")
def sandbox() -> Iterator[LocalBackend]:
    ok, why = bwrap_works()
    if not ok:
        pytest.skip(f"bubblewrap sandbox unavailable: {why}")
    backend = LocalBackend(workers=2, uid_base=UID_BASE, host_grace=5.0)
    yield backend
    backend.close()
