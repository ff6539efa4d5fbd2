"""Simulated time and generated ids: seeded, never wall time, and normalisable.

Both keep a registry of what they issued during the episode, in order, so that the
canonical fingerprint can replace each generated id by ``<prefix>#<n>`` and each issued
timestamp by ``T+<n>``: two episodes that did the same things in the same order fingerprint
identically whatever ids and times were drawn. A rolled-back write un-issues what it drew
(``mark``/``restore``), so failed attempts shift neither numbering nor time.
"""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime
from typing import Any

_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


_FIRST, _LAST = -30_610_224_000, 253_402_300_799  # 1000-01-01T00:00:00Z, 9999-12-31T23:59:59Z


def iso(epoch: int) -> str:
    """``2024-03-05T10:00:00Z`` for a UTC epoch second: the text of
    ``datetime.fromtimestamp(epoch, UTC).isoformat()[:19] + "Z"``, through ``time.strftime``
    (a third of its cost, and no C printf, which a loaded libquadmath slows) for an int of
    the years 1000 to 9999. Any other epoch takes datetime itself: ``strftime`` writes other
    years unpadded (``999-...``, ``10000-...``, where datetime refuses) and truncates a float
    that datetime rounds to the microsecond."""
    if type(epoch) is int and _FIRST <= epoch <= _LAST:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
    return datetime.fromtimestamp(epoch, tz=UTC).isoformat()[:19] + "Z"


def epoch(text: str) -> int:
    """The epoch second of an ``iso`` timestamp or a ``YYYY-MM-DD`` date (midnight UTC)."""
    if len(text) == 10:
        text += "T00:00:00Z"
    return int(datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp())


class SimClock:
    """Starts at the task's "now" and advances a seeded 20-90 s on every ``tick``."""

    def __init__(self, start: int, r: random.Random) -> None:
        self._now = start
        self._r = r
        self.issued: dict[str, str] = {}

    def now(self) -> str:
        return iso(self._now)

    def tick(self) -> str:
        """Advance and return the new time; the value is registered for normalisation."""
        self._now += self._r.randint(20, 90)
        stamp = iso(self._now)
        self.issued.setdefault(stamp, f"T+{len(self.issued) + 1}")
        return stamp

    def mark(self) -> Any:
        return (self._now, len(self.issued))

    def restore(self, mark: Any) -> None:
        """Undo every tick since ``mark`` (a rolled-back write takes no time)."""
        self._now, n = mark
        if len(self.issued) > n:
            self.issued = dict(list(self.issued.items())[:n])


class IdGen:
    """Ids like ``RF-7Q2K9XPA`` drawn from a seeded stream, registered in creation order."""

    def __init__(self, r: random.Random) -> None:
        self._r = r
        self.issued: dict[str, str] = {}
        self._counts: dict[str, int] = {}

    def new(self, prefix: str) -> str:
        while True:
            bits = self._r.getrandbits(40)
            value = prefix + "-" + "".join(_ALPHABET[(bits >> (5 * i)) & 31] for i in range(8))
            if value not in self.issued:
                break
        n = self._counts[prefix] = self._counts.get(prefix, 0) + 1
        self.issued[value] = f"{prefix}#{n}"
        return value

    def mark(self) -> Any:
        return len(self.issued)

    def restore(self, mark: Any) -> None:
        """Forget the ids issued since ``mark`` (a rolled-back write created no rows). The
        stream is not rewound: later raw ids differ, their normalised labels do not."""
        if len(self.issued) > mark:
            dropped = list(self.issued.items())[mark:]
            self.issued = dict(list(self.issued.items())[:mark])
            for _, label in dropped:
                prefix = label.split("#")[0]
                self._counts[prefix] -= 1
