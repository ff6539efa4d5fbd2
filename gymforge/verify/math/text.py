"""Answers read as text, and golds with nothing in them. Pure, linear in the text, no sympy.

A gold the parser cannot read (a word, a choice ``\\text{(B)}``, a base-n numeral ``52_8``)
is compared as text. ``norm_text`` drops only what does not change what a text says: blanks,
braces, brackets, ``$``, backslashes, wrappers and spacing (``\\text{}``, ``\\mathrm{}``,
``\\boxed{}``, ``\\quad``, ``\\,``), a full stop, comma, colon or semicolon that is not inside
a number, and a hyphen inside a word; case too, for text golds. Signs, ``_``, ``^``, ``/``,
``!``, ``=`` and digits stay: ``528`` is not ``52_8`` and ``\\text{-x}`` is not ``x``.

A gold of plain words (``word_gold``) is text too, not a product of letters.

A gold with no content (``$$``, ``\\text{ }``, ``\\boxed{}``: nothing the parser reads and no
text left) cannot be answered; ``blank_gold`` says so, and the verifier and the dataset
loaders refuse it rather than compare every empty answer equal to it.
"""

from __future__ import annotations

import re

from gymforge.verify.math.lexer import FUNCS, WORDS, ParseError, TooLarge
from gymforge.verify.math.parser import parse

_WRAPPERS = re.compile(
    r"\\(?:text(?:bf|it|rm|sf|tt|up|normal)?|math(?:rm|bf|it|sf|normal)|mbox|boxed|fbox"
    r"|displaystyle|textstyle|left|right|big|Big|bigg|Bigg|quad|qquad|hspace|enspace)"
    r"(?![a-zA-Z])|\\[,;:! ~]"
)
_WORDS_ONLY = re.compile(r"[A-Za-z]+(?:[ \t]+[A-Za-z]+)*\.?")
_DROP = re.compile(r"[\s{}()\[\]$~\\]|(?<![0-9])[.,:;]|[.,:;](?![0-9])|(?<=[A-Za-z])-(?=[A-Za-z])")


def norm_text(s: str, fold_case: bool = True) -> str:
    """``s`` as text: what two texts that say the same thing have in common (see above)."""
    s = _WRAPPERS.sub(" ", s.replace("dfrac", "frac").replace("tfrac", "frac"))
    s = _DROP.sub("", s)
    return s.lower() if fold_case else s


def blank_gold(gold: str) -> bool:
    """Whether ``gold`` holds nothing to answer: no text left by ``norm_text`` and nothing the
    parser reads but text (``\\{\\}``, the empty set, has no text but is read)."""
    if norm_text(gold):
        return False
    try:
        return bool(parse(gold)[0] == "text")
    except (ParseError, TooLarge):
        return True


def word_gold(gold: str) -> bool:
    """Whether ``gold`` is plain words (``Monday``, ``No solution``), to be read as text: only
    letters and blanks, a word of four letters or more, and no word the parser knows. LaTeX
    would read it as a product of one-letter variables, which any anagram equals."""
    s = gold.strip()
    if not _WORDS_ONLY.fullmatch(s):
        return False
    words = s.rstrip(".").split()
    return any(len(w) >= 4 for w in words) and not any(w in WORDS or w in FUNCS for w in words)


BLANK_GOLD = "the gold answer has no content"
