"""The ``driver`` fixture: reset environments stepped by hand, closed after the test."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from spreadsheet_helpers import Driver


@pytest.fixture
def driver() -> Iterator[Callable[..., Driver]]:
    made: list[Driver] = []

    def make(tid: str, seed: int = 0) -> Driver:
        made.append(Driver(tid, seed))
        return made[-1]

    yield make
    for d in made:
        d.close()
