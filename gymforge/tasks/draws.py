"""The draws task generation makes most, without ``random.Random``'s Python-level layers.

``randint(r, lo, hi)`` and ``choice(r, seq)`` return what ``r.randint(lo, hi)`` and
``r.choice(seq)`` return, leaving ``r`` in the same state: for a plain ``random.Random`` and
plain int bounds they call the one method both end in (``_randbelow``) directly, as CPython
(3.11 onwards) does — ``randint(lo, hi)`` is ``randrange(lo, hi + 1)``, which is
``lo + _randbelow(hi + 1 - lo)``, and ``choice(seq)`` is ``seq[_randbelow(len(seq))]``.
Anything else (a subclass, which may override either, an empty range or sequence, bounds of
another type) takes the method itself. ``_randbelow``'s own draw (``getrandbits`` of
``n.bit_length()`` bits until one is below ``n``) is made inline, once checked at import to
be this Python's. ``tests/tasks/test_generation_fast_paths.py`` holds
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
        if not _INLINE or "_randbelow" in r.__dict__:  # an instance's own draw: it decides
            drawn: int = r._randbelow(hi - lo + 1)  # type: ignore[attr-defined]
            return lo + drawn
        n = hi - lo + 1  # ``_randbelow(n)``, inline (module docstring)
        k = n.bit_length()
        x = r.getrandbits(k)
        while x >= n:
            x = r.getrandbits(k)
        return lo + x
    return r.randint(lo, hi)


def choice(r: random.Random, seq: Sequence[T]) -> T:
    """``r.choice(seq)``."""
    kind = type(seq)
    if type(r) is random.Random and (kind is list or kind is tuple) and seq:
        n = len(seq)
        if not _INLINE or "_randbelow" in r.__dict__:  # an instance's own draw: it decides
            i: int = r._randbelow(n)  # type: ignore[attr-defined]
            return seq[i]
        k = n.bit_length()  # ``_randbelow(n)``, inline (module docstring)
        x = r.getrandbits(k)
        while x >= n:
            x = r.getrandbits(k)
        return seq[x]
    return r.choice(seq)


def _inline_is_randbelow() -> bool:
    """Whether ``random.Random._randbelow(n)`` draws as the inline copy above does (``k =
    n.bit_length()``, then ``getrandbits(k)`` until below ``n``: CPython's
    ``_randbelow_with_getrandbits``), checked on this Python draw for draw, state included."""
    a, b = random.Random(7), random.Random(7)
    for n in (*range(1, 40), 100, 1000, 2**31 + 5, 10**20) * 3:
        want = a._randbelow(n)  # type: ignore[attr-defined]
        k = n.bit_length()
        got = b.getrandbits(k)
        while got >= n:
            got = b.getrandbits(k)
        if got != want:
            return False
    return a.getstate() == b.getstate()


_INLINE = _inline_is_randbelow()
"""Whether ``randint`` and ``choice`` draw ``_randbelow``'s draw inline (one Python call less
per draw; a task draws about ten): on a Python whose ``_randbelow`` draws otherwise they
call it."""
