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


_HIDDEN = {
    c: f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"
    for c in (
        *range(0x20),
        *range(0x7F, 0xA0),
        *range(0x202A, 0x202F),  # bidirectional embeddings and overrides
        *range(0x2066, 0x206A),  # bidirectional isolates
    )
    if chr(c) not in "\n\t"
}


def visible(text: str) -> str:
    """``text`` as a terminal shows it literally: every control character but newline and
    tab (ESC and its sequences, carriage return, backspace, the C1 range) and every
    bidirectional override written as its escape (``\\x1b``), so text from a file or a
    server cannot move the cursor, erase or hide a line, or reorder what is shown."""
    return text if text.isprintable() else text.translate(_HIDDEN)
