"""The work budget of formula evaluation: what one evaluation may cost, within ``limits``.

At run time every function node of a compiled formula is wrapped by ``guard``, which
charges the active ``Budget`` deterministic work units (one per call, one per input and
output element, the priced cost of a wildcard match), and before the call refuses what would
be too big: a broadcast of more than ``MAX_ELEMENTS`` elements, a text longer than
``MAX_TEXT`` (Excel's cell limit) from ``REPT``, ``&``, ``CONCAT``, ``TEXTJOIN`` or
``SUBSTITUTE``, ``FACT`` beyond 170. A refusal is an error value (``#VALUE!`` / ``#NUM!``)
with a reason; a cell that exhausts ``CELL_WORK``, or a recalculation that exhausts
``RECALC_WORK``, is ``#VALUE!`` whatever ``IFERROR`` says. Nothing here looks at a clock.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np
import schedula
from formulas.functions import Error

from gymforge.envs.spreadsheet.limits import (
    CELL_WORK,
    MAX_ELEMENTS,
    MAX_TEXT,
    NUMBER_TEXT,
    RECALC_WORK,
    base_name,
)


class Exhausted(Exception):
    """The cell's or the recalculation's work budget is spent."""


def _error(code: str) -> Any:
    return np.asarray([[Error.errors[code]]], object)


def _flat(x: Any) -> list[Any]:
    if isinstance(x, np.ndarray):
        return list(x.ravel())
    return [x]


def _size(x: Any) -> int:
    return int(x.size) if isinstance(x, np.ndarray) else 1


def _shape(x: Any) -> tuple[int, int]:
    if isinstance(x, np.ndarray) and x.ndim == 2:
        return int(x.shape[0]), int(x.shape[1])
    if isinstance(x, np.ndarray) and x.ndim == 1:
        return 1, int(x.shape[0])
    return 1, 1


def _text_len(v: Any) -> int:
    if isinstance(v, str):
        return len(v)
    if v is schedula.EMPTY or v is None:
        return 0
    return NUMBER_TEXT


def _longest(x: Any) -> int:
    return max((_text_len(v) for v in _flat(x)), default=0)


def _total(x: Any) -> int:
    return sum(_text_len(v) for v in _flat(x))


def _extremes(x: Any) -> tuple[float, float]:
    """The smallest and largest numbers among ``x``'s elements, numeric text included
    (``(0, 0)`` if there are none)."""
    low = high = 0.0
    for v in _flat(x):
        num: float | None = None
        if isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool):
            num = float(v)
        elif isinstance(v, str):
            with suppress(ValueError):
                num = float(v)
        if num is not None:
            low, high = min(low, num), max(high, num)
    return low, high


def _largest(x: Any) -> float:
    return _extremes(x)[1]


_STAR = re.compile(r"(?<!~)\*")


def _stars(x: Any) -> int:
    return max((len(_STAR.findall(v)) for v in _flat(x) if isinstance(v, str)), default=0)


Check = Callable[[tuple[Any, ...]], tuple[str, str] | None]


def _rept(args: tuple[Any, ...]) -> tuple[str, str] | None:
    if len(args) >= 2 and _longest(args[0]) * _largest(args[1]) > MAX_TEXT:
        return "#VALUE!", f"REPT would make text longer than {MAX_TEXT} characters"
    return None


def _concat(args: tuple[Any, ...]) -> tuple[str, str] | None:
    if sum(_longest(a) for a in args) > MAX_TEXT:
        return "#VALUE!", f"the concatenated text would be longer than {MAX_TEXT} characters"
    return None


def _join(args: tuple[Any, ...]) -> tuple[str, str] | None:
    per = sum(_size(a) for a in args) * (_longest(args[0]) if args else 0)
    if sum(_total(a) for a in args) + per > MAX_TEXT:
        return "#VALUE!", f"the joined text would be longer than {MAX_TEXT} characters"
    return None


def _substitute(args: tuple[Any, ...]) -> tuple[str, str] | None:
    if len(args) < 3:
        return None
    text, old, new = args[:3]
    grow = _longest(new) - min((_text_len(v) for v in _flat(old)), default=0)
    if grow <= 0:
        return None
    if all(_size(a) == 1 for a in args[:3]):
        t, o = str(_flat(text)[0]), str(_flat(old)[0])
        count = t.count(o) if o else 0
    else:
        count = _longest(text)
    if _longest(text) + count * grow > MAX_TEXT:
        return "#VALUE!", f"SUBSTITUTE would make text longer than {MAX_TEXT} characters"
    return None


def _fact(limit: int) -> Check:
    def check(args: tuple[Any, ...]) -> tuple[str, str] | None:
        if args and _largest(args[0]) > limit:
            return "#NUM!", f"the factorial of a number over {limit} is #NUM! (as in Excel)"
        return None

    return check


def _digits(args: tuple[Any, ...]) -> tuple[str, str] | None:
    """``ROUND``'s (and ``TRUNC``'s) digits: the engine computes ``10 ** int(d)`` in Python
    integers."""
    low, high = _extremes(args[1]) if len(args) >= 2 else (0.0, 0.0)
    if max(high, -low) > 308:
        return "#NUM!", "rounding to more than 308 digits either side of the point is #NUM!"
    return None


PRECHECKS: dict[str, Check] = {
    "ROUND": _digits,
    "ROUNDUP": _digits,
    "ROUNDDOWN": _digits,
    "TRUNC": _digits,
    "REPT": _rept,
    "&": _concat,
    "CONCAT": _join,
    "CONCATENATE": _concat,
    "TEXTJOIN": _join,
    "SUBSTITUTE": _substitute,
    "FACT": _fact(170),
    "FACTDOUBLE": _fact(300),
}
WILDCARDS = frozenset(
    [
        "COUNTIF",
        "COUNTIFS",
        "SUMIF",
        "SUMIFS",
        "AVERAGEIF",
        "AVERAGEIFS",
        "MAXIFS",
        "MINIFS",
        "MATCH",
        "XMATCH",
        "VLOOKUP",
        "HLOOKUP",
        "XLOOKUP",
        "LOOKUP",
        "SEARCH",
    ]
)


@dataclass
class Budget:
    """Work units of one recalculation (``total``) and of the cell being computed
    (``work``); ``reason``: why the current cell's value is a limit's error, if it is."""

    cell_limit: int = CELL_WORK
    total_limit: int = RECALC_WORK
    work: int = 0
    total: int = 0
    reason: str | None = None
    exhausted: bool = False

    def start(self) -> None:
        """A new cell: its own work count; a spent recalculation stays spent."""
        self.work, self.reason, self.exhausted = 0, None, False
        if self.total > self.total_limit:
            self.reason = f"the recalculation needs more than {self.total_limit} work units"
            self.exhausted = True

    def charge(self, units: int) -> None:
        """Spend ``units``; ``Exhausted`` (and the cell's reason set) past a limit."""
        self.work += units
        self.total += units
        if self.work > self.cell_limit:
            self._spent(f"the formula needs more than {self.cell_limit} work units")
        if self.total > self.total_limit:
            self._spent(f"the recalculation needs more than {self.total_limit} work units")

    def _spent(self, why: str) -> None:
        if not self.exhausted:
            self.exhausted, self.reason = True, why
        raise Exhausted(why)

    def refuse(self, code: str, why: str) -> Any:
        if self.reason is None:
            self.reason = why
        return _error(code)

    def price_wildcards(self, name: str, args: tuple[Any, ...]) -> None:
        """A ``*`` in a criterion is ``.*`` to the engine's regular expressions: matching
        ``k`` of them against text of length ``n`` costs up to ``n**k`` per element."""
        stars = max((_stars(a) for a in args), default=0)
        if stars == 0:
            return
        n = max((_longest(a) for a in args), default=0) + 1
        cost = sum(_size(a) for a in args) * n**stars
        if self.work + cost > self.cell_limit:
            self._spent(
                f"{name}: a wildcard criterion with {stars} '*' over text of {n - 1} "
                f"characters needs more than {self.cell_limit} work units"
            )
        self.charge(cost)


_ACTIVE: ContextVar[Budget | None] = ContextVar("formula_budget", default=None)


@contextmanager
def active(budget: Budget) -> Iterator[Budget]:
    """Make ``budget`` the one the guarded functions charge while the block runs."""
    token = _ACTIVE.set(budget)
    try:
        yield budget
    finally:
        _ACTIVE.reset(token)


def guard(node_id: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (a compiled formula's function node) under the active budget: refused
    before the call when its output would be too big, charged for its inputs and output."""
    name = base_name(node_id)
    check = PRECHECKS.get(name)

    def call(*args: Any, **kwargs: Any) -> Any:
        budget = _ACTIVE.get()
        if budget is None:
            budget = Budget()  # evaluation outside a recalculation is bounded too
        if budget.exhausted:
            return _error("#VALUE!")
        try:
            budget.charge(1 + sum(_size(a) for a in args))
            shapes = [_shape(a) for a in args]
            rows = max((r for r, _ in shapes), default=1)
            cols = max((c for _, c in shapes), default=1)
            if rows * cols > MAX_ELEMENTS:
                return budget.refuse(
                    "#VALUE!", f"{name} would make an array over {MAX_ELEMENTS} elements"
                )
            stop = check(args) if check else None
            if stop is not None:
                return budget.refuse(*stop)
            if name in WILDCARDS:
                budget.price_wildcards(name, args)
            result = fn(*args, **kwargs)
            n = _size(result)
            budget.charge(n)
            if n > MAX_ELEMENTS:
                return budget.refuse(
                    "#VALUE!", f"{name} made an array over {MAX_ELEMENTS} elements"
                )
            if _longest(result) > MAX_TEXT:
                return budget.refuse(
                    "#VALUE!", f"{name} made text longer than {MAX_TEXT} characters"
                )
            return result
        except Exhausted:
            return _error("#VALUE!")

    return call
