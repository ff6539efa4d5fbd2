"""How numbers read in every message and table: one rounding, one plural rule.

The progress bar, the run's summary table, the eval tables and the one-line messages all
format a rate with :func:`percent`, a mean with :func:`decimal`, and a count of things with
:func:`plural`, so a figure shown twice reads the same both times and no message says
"1 rows" or "step step 2".
"""

from __future__ import annotations

PERCENT_DIGITS = 1
DECIMAL_DIGITS = 3


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``"1 row"``, ``"2 rows"``; ``many`` for an irregular plural (``"1 policy"``,
    ``"2 policies"`` with ``many="policies"``)."""
    return f"{count} {noun if count == 1 else (many or noun + 's')}"


def percent(rate: float | None, digits: int = PERCENT_DIGITS) -> str:
    """A rate in [0, 1] as ``"97.5%"``; ``"-"`` when there is none."""
    return "-" if rate is None else f"{rate:.{digits}%}"


def decimal(value: float | None, digits: int = DECIMAL_DIGITS, sign: bool = False) -> str:
    """A mean as ``"0.970"`` (``"+0.970"`` with ``sign``); ``"-"`` when there is none."""
    if value is None:
        return "-"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def times(count: int) -> str:
    """``"once"``, ``"twice"``, ``"3 times"``."""
    return {1: "once", 2: "twice"}.get(count, f"{count} times")
