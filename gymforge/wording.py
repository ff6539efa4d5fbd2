"""How numbers read in every message and table: one rounding, one plural rule; and how
text from elsewhere is shown (:func:`visible`) or read past its disguises (:func:`plain`).

The progress bar, the run's summary table, the eval tables and the one-line messages all
format a rate with :func:`percent`, a mean with :func:`decimal`, and a count of things with
:func:`plural`, so a figure shown twice reads the same both times and no message says
"1 rows" or "step step 2".
"""

from __future__ import annotations

import unicodedata

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
        0x061C,  # the Arabic letter mark
        0x200E,  # left-to-right and right-to-left marks
        0x200F,
        *range(0x202A, 0x202F),  # bidirectional embeddings and overrides
        *range(0x2066, 0x206A),  # bidirectional isolates
        0x2028,  # Unicode's line and paragraph separators (line breaks to many viewers)
        0x2029,
    )
    if c != 0x09
} | {0x0A: "\\n"}
_LINES = {k: v for k, v in _HIDDEN.items() if k != 0x0A}


def visible(text: str, lines: bool = False) -> str:
    """``text`` as a terminal shows it literally: every control character but tab (ESC and
    its sequences, carriage return, backspace, the C1 range), every bidirectional override
    and mark, and every line break (a line feed as ``\\n``, Unicode's line and paragraph
    separators) written as its escape, so text from a file or a server cannot move the
    cursor, erase, hide or forge a line (a pass printed at a line's start after the error
    was pushed off the screen), or reorder what is shown. ``lines``: line feeds are kept
    (a traceback's lines, none of them a message's)."""
    if text.isprintable():  # none of them is printable
        return text
    return text.translate(_LINES if lines else _HIDDEN)


MESSAGE_LINES = 4
"""The most line breaks of a message :func:`visible_message` keeps (a syntax error's source
line and caret, a hint on a line of its own)."""


def visible_message(text: str) -> str:
    """``text`` shown as :func:`visible` shows it, but for its first :data:`MESSAGE_LINES`
    line breaks, kept, each following line indented by two spaces under the first: a
    message may show a source line or a hint on lines of its own, and text it quotes (a
    file's, a server's, an agent's) can neither start a line of its own nor push the first
    line off the screen."""
    first, *rest = text.split("\n", MESSAGE_LINES)
    return "\n  ".join(visible(part) for part in (first, *rest))


def plain(text: str) -> str:
    """``text`` with its compatibility forms as their plain ones (NFKC: full-width letters,
    a no-break space, a long s) and its format characters (Unicode's ``Cf``: zero-width
    spaces and joiners, soft hyphens, bidirectional marks) dropped: what a reader that
    normalises (a tokenizer, a model repeating it) takes it to say."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(c for c in text if unicodedata.category(c) != "Cf")
