"""The draws task generation makes most, without ``random.Random``'s Python-level layers.

``randint(r, lo, hi)`` and ``choice(r, seq)`` return what ``r.randint(lo, hi)`` and
``r.choice(seq)`` return, leaving ``r`` in the same state: for a plain ``random.Random`` and
plain int bounds they call the one method both end in (``_randbelow``) directly, as CPython
(3.11 onwards) does — ``randint(lo, hi)`` is ``randrange(lo, hi + 1)``, which is
``lo + _randbelow(hi + 1 - lo)``, and ``choice(seq)`` is ``seq[_randbelow(len(seq))]``.
Anything else (a subclass, which may override either, an empty range or sequence, bounds of
another type) takes the method itself. ``tests/tasks/test_generation_fast_paths.py`` holds
them equal draw for draw.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def randint(r: random.Random, lo: int, hi: int) -> int:
    """``r.randint(lo, hi)``."""
    if type(r) is random.Random and type(lo) is int and type(hi) is int and lo <= hi:
        drawn: int = r._randbelow(hi - lo + 1)  # type: ignore[attr-defined]
        return lo + drawn
    return r.randint(lo, hi)


def choice(r: random.Random, seq: Sequence[T]) -> T:
    """``r.choice(seq)``."""
    kind = type(seq)
    if type(r) is random.Random and (kind is list or kind is tuple) and seq:
        i: int = r._randbelow(len(seq))  # type: ignore[attr-defined]
        return seq[i]
    return r.choice(seq)
