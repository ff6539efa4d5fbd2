"""Bounds on formula evaluation: what a formula may call, and what one evaluation may cost.

A formula is checked where it is taken in: its text before the engine's parser sees it
(``screen``: at most ``MAX_FORMULA`` characters, no ``LAMBDA(``/``LET(``, whose pattern in
the parser backtracks exponentially), then its tokens (``admit``: ``MAX_NESTING`` levels of
parentheses, and only functions in ``ALLOWED``). The allow-list
holds functions whose work and output are set by the cells they read; refused are those
that build references from text (``INDIRECT``, ``OFFSET``: what they read is not in the
formula, so neither recalculation order nor the verifier could see it), lambdas and their
loops (``LAMBDA``, ``LET``, ``MAKEARRAY``, ``MAP`` ...), functions whose output size is a
number argument (``MUNIT``, ``EXPAND``, ``WRAPROWS`` ...), volatile ones (``RAND``,
``NOW``: a verdict must be reproducible) and anything the engine does not implement.

At run time every function node of a compiled formula is wrapped by ``Budget.guard``,
which charges deterministic work units (one per call, one per input and output element,
the priced cost of a wildcard match), and before the call refuses what would be too big:
a broadcast of more than ``MAX_ELEMENTS`` elements, a text longer than ``MAX_TEXT``
(Excel's cell limit) from ``REPT``, ``&``, ``CONCAT``, ``TEXTJOIN`` or ``SUBSTITUTE``,
``FACT`` beyond 170. A refusal is an error value (``#VALUE!`` / ``#NUM!``) with a reason;
a cell that exhausts ``CELL_WORK``, or a recalculation that exhausts ``RECALC_WORK``, is
``#VALUE!`` whatever ``IFERROR`` says. Nothing here looks at a clock.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np
import schedula
from formulas.functions import Error

from gymforge.core.errors import ToolError

MAX_FORMULA = 1_000
"""Characters of one formula (parsing and compiling cost about 0.2 ms and 4 KB a character)."""
MAX_FILL = 1_000
"""The most cells one ``set_formula`` fills (a column of the grid)."""
MAX_FILL_TEXT = 12_000
"""Characters of distinct formula text one ``set_formula`` may have compiled (a fill-down
makes a distinct text per cell wherever a reference is relative)."""
MAX_FORMULA_CELLS = 2_000
"""The most formula cells a workbook holds: every write recalculates all of them."""
MAX_BOOK_TEXT = 30_000
"""Characters of formula text a workbook holds in all."""
CACHE_TEXT = 60_000
"""Characters of formula text the compile cache holds (two full workbooks)."""
MAX_NESTING = 64
MAX_TEXT = 32_767
MAX_ELEMENTS = 60_000
"""Elements of one array value (the grid itself is 52,000 cells)."""
CELL_WORK = 300_000
RECALC_WORK = 1_000_000
NUMBER_TEXT = 24
"""The longest text a number or boolean becomes in a concatenation."""

_MATH = """ABS CEILING CEILING.MATH CEILING.PRECISE DEGREES EVEN EXP FACT FACTDOUBLE FLOOR
FLOOR.MATH FLOOR.PRECISE GCD INT LCM LN LOG LOG10 MOD MROUND ODD PI POWER PRODUCT RADIANS
ROUND ROUNDDOWN ROUNDUP SIGN SQRT SUM SUMIF SUMIFS SUMPRODUCT SUMSQ TRUNC SIN COS TAN"""
_STAT = """AVERAGE AVERAGEA AVERAGEIF AVERAGEIFS AVEDEV CORREL COUNT COUNTA COUNTBLANK
COUNTIF COUNTIFS DEVSQ FORECAST FORECAST.LINEAR GEOMEAN HARMEAN INTERCEPT LARGE MAX MAXA
MAXIFS MEDIAN MIN MINA MINIFS MODE MODE.SNGL PEARSON PERCENTILE PERCENTILE.EXC
PERCENTILE.INC QUARTILE QUARTILE.EXC QUARTILE.INC RANK RANK.AVG RANK.EQ RSQ SLOPE SMALL
STDEV STDEV.P STDEV.S STDEVP TRIMMEAN VAR VAR.P VAR.S VARP"""
_LOGIC_INFO = """AND FALSE IF IFERROR IFNA IFS NOT OR SWITCH TRUE XOR ERROR.TYPE ISBLANK ISERR
ISERROR ISEVEN ISLOGICAL ISNA ISNONTEXT ISNUMBER ISODD ISTEXT N NA TYPE"""
_TEXT = """CHAR CLEAN CODE CONCAT CONCATENATE EXACT FIND LEFT LEN LOWER MID NUMBERVALUE PROPER
REPLACE REPT RIGHT SEARCH SUBSTITUTE T TEXTAFTER TEXTBEFORE TEXTJOIN TRIM UPPER VALUE"""
_LOOK = """CHOOSE CHOOSECOLS CHOOSEROWS COLUMN COLUMNS DROP FILTER HLOOKUP HSTACK INDEX LOOKUP
MATCH ROW ROWS SORT SORTBY TAKE TOCOL TOROW TRANSPOSE UNIQUE VLOOKUP VSTACK XLOOKUP XMATCH"""
_DATE_MONEY = """DATE DATEVALUE DAY DAYS EDATE EOMONTH HOUR MINUTE MONTH SECOND TIME WEEKDAY
YEAR FV NPER NPV PMT PV"""
ALLOWED = frozenset(
    " ".join((_MATH, _STAT, _LOGIC_INFO, _TEXT, _LOOK, _DATE_MONEY, "ARRAY ARRAYROW")).split()
)
"""The functions a formula may call (``ARRAY``/``ARRAYROW`` are ``{1,2;3,4}`` constants)."""

_WHY = {
    "INDIRECT": "builds a reference from text, so what it reads is not in the formula",
    "OFFSET": "builds a reference from numbers, so what it reads is not in the formula",
    "LAMBDA": "runs a lambda, a loop the cells do not bound",
    "LET": "binds names in a lambda scope",
    "RAND": "is volatile (a verdict must be reproducible)",
    "RANDBETWEEN": "is volatile (a verdict must be reproducible)",
    "NOW": "is volatile (a verdict must be reproducible)",
    "TODAY": "is volatile (a verdict must be reproducible)",
}
for _name in ("MAKEARRAY", "MAP", "REDUCE", "SCAN", "BYROW", "BYCOL"):
    _WHY[_name] = "runs a lambda, a loop the cells do not bound"
for _name in ("MUNIT", "EXPAND", "WRAPROWS", "WRAPCOLS", "SEQUENCE", "RANDARRAY"):
    _WHY[_name] = "makes an array whose size is a number argument"

_PREFIX = re.compile(r"^(?:_XLFN\.|_XLWS\.)+")
_SUFFIX = re.compile(r"<\d+>$")


def base_name(name: str) -> str:
    """``SUM`` from ``_xlfn.SUM``, ``SUM<3>`` (the engine's node ids) or ``sum``."""
    return _PREFIX.sub("", _SUFFIX.sub("", name.upper()))


_LAMBDA_TEXT = re.compile(r"(?:LAMBDA|LET)\s*\(|_XLETA\.", re.IGNORECASE)


def screen(text: str) -> None:
    """Refuse (``validation``), before the engine's parser sees it, text the parser cannot
    take in bounded time: over ``MAX_FORMULA`` characters, or ``LAMBDA(``/``LET(`` anywhere
    (the parser's pattern for them backtracks exponentially on unterminated text)."""
    if len(text) > MAX_FORMULA:
        raise ToolError("validation", f"a formula has at most {MAX_FORMULA} characters")
    found = _LAMBDA_TEXT.search(text)
    if found is not None:
        name = found.group(0).rstrip("( \t\n").upper()
        raise ToolError("validation", f"{name} {_WHY.get(name, _WHY['LAMBDA'])}; write it out")


def admit(text: str, tokens: Iterable[Any]) -> None:
    """Refuse (``validation``) a formula over the size limits or calling a function not in
    ``ALLOWED``, naming the function and why (``screen`` has seen the text)."""
    depth = deepest = 0
    for tok in tokens:
        kind = type(tok).__name__
        if kind == "Parenthesis":
            depth += 1 if tok.name == "(" else -1
            deepest = max(deepest, depth)
        elif kind in ("Function", "Lambda"):
            name = base_name(str(tok.name))
            if name in ("{", "}", ";"):  # an array constant
                continue
            if name not in ALLOWED:
                why = _WHY.get(name, "is not available in this workbook")
                raise ToolError("validation", f"{name} {why}; write the references out")
    if deepest > MAX_NESTING:
        raise ToolError("validation", f"a formula nests at most {MAX_NESTING} levels")


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
