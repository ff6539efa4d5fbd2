"""``tasks.draws`` on what ``random.Random`` accepts or refuses beyond plain ints and lists:
the same draw or the same error, the same warnings, and the same state after."""

from __future__ import annotations

import enum
import random
import warnings
from collections.abc import Callable
from typing import Any

import pytest

from gymforge.tasks import draws

try:
    import numpy as np  # not a dependency: its ints and arrays are checked where installed

    NUMPY_BOUNDS: list[tuple[Any, Any]] = [(np.int64(1), np.int64(5)), (1, np.int32(9))]
    NUMPY_SEQUENCES: list[Callable[[], Any]] = [lambda: np.array([3, 4, 5])]
except ImportError:
    NUMPY_BOUNDS, NUMPY_SEQUENCES = [], []


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 7


class Sub(int):
    pass


def _outcome(draw: Callable[[random.Random], Any]) -> Any:
    r = random.Random(4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value: Any = draw(r)
        except Exception as err:
            value = (type(err), str(err))
    return value, type(value), [(w.category, str(w.message)) for w in caught], r.getstate()


BOUNDS = [
    *NUMPY_BOUNDS,
    (Level.LOW, Level.HIGH),
    (Sub(2), Sub(9)),
    (2, Sub(9)),
    (3.0, 9),
    (True, 5),
    (-(2**200), 2**200),
    (1, 2**1000),
    (5, 5),
    (-5, -9),
    ("1", "3"),
    (None, 3),
]


@pytest.mark.parametrize("lo, hi", BOUNDS, ids=repr)
def test_randint_of_odd_bounds_is_randints(lo: Any, hi: Any) -> None:
    assert _outcome(lambda r: draws.randint(r, lo, hi)) == _outcome(lambda r: r.randint(lo, hi))


SEQUENCES: list[Callable[[], Any]] = [
    set,
    lambda: {1, 2},
    lambda: {"a": 1, "b": 2},
    lambda: (i for i in range(3)),
    lambda: range(5),
    lambda: range(0),
    lambda: "abc",
    lambda: b"xy",
    lambda: [None],
    lambda: (Level.LOW,),
    *NUMPY_SEQUENCES,
    lambda: memoryview(b"ab"),
]


@pytest.mark.parametrize("make", SEQUENCES)
def test_choice_of_odd_sequences_is_choices(make: Callable[[], Any]) -> None:
    assert _outcome(lambda r: draws.choice(r, make())) == _outcome(lambda r: r.choice(make()))
