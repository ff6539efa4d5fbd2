"""Fixtures for the math verifier tests: one shared pool for the session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gymforge.verify.math import MathPool, MathVerifier


@pytest.fixture(scope="session")
def math_pool() -> Iterator[MathPool]:
    pool = MathPool(workers=2).start()
    yield pool
    pool.shutdown()


@pytest.fixture(scope="session")
def verifier(math_pool: MathPool) -> MathVerifier:
    return MathVerifier(pool=math_pool)
