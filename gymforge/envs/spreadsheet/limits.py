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

What one evaluation may cost (``CELL_WORK``, ``RECALC_WORK``, ``MAX_ELEMENTS``,
``MAX_TEXT``) is charged and refused at run time by ``formula_budget``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

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
