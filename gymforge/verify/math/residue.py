"""A residue written with its modulus: ``5 \\pmod{7}`` answers 5.

Models answer a congruence or a remainder task with the modulus beside the residue
(``5 \\pmod{7}``, ``x \\equiv 5 \\pmod 7``, ``5 \\bmod 7``, ``5 \\ (\\text{mod } 7)``), which
the parser does not read (``parse_error``). ``residue_of`` returns the residue alone when the
answer is exactly one such clause whose residue is an integer numeral at least 0 and below
the modulus: there the congruence reading (the class of 5 modulo 7, whose representative in
``[0, m)`` is 5) and the operator reading (``5 \\bmod 7`` = 5) are the same number, so the
label changes nothing the value check judges. Anything else is left as written (and fails
as before): a residue not below its modulus (``12 \\pmod{7}``, which names 5), a
computation before the clause (``2^{5} \\bmod 7``, the question copied), text around it.
The gold is never rewritten: a gold that states a modulus is compared as before.
"""

from __future__ import annotations

import re

_SPACE = r"(?:\s|\\[,;:! ]|\\quad|\\qquad|~)*"
_NUM = r"\{?" + _SPACE + r"(\d{1,12})" + _SPACE + r"\}?"
_WORD = r"(?:\\(?:text|mathrm|operatorname|textrm)\{" + _SPACE + r"mod" + _SPACE + r"\}|mod)"
_OPEN = r"(?:\\left\s*\(|\\bigl?\s*\(|\()"
_CLOSE = r"(?:\\right\s*\)|\\bigr?\s*\)|\))"
_CLAUSE = (
    r"(?:\\[bp]?mod(?![a-zA-Z])" + _SPACE + _NUM
    + r"|" + _OPEN + _SPACE + _WORD + _SPACE + _NUM + _SPACE + _CLOSE
    + r"|\\text\{" + _SPACE + r"\(" + _SPACE + r"mod" + _SPACE + r"(\d{1,12})" + _SPACE
    + r"\)" + _SPACE + r"\})"
)  # fmt: skip
_RESIDUE = re.compile(
    r"\s*(?:[a-zA-Z]" + _SPACE + r"(?:\\equiv|=)" + _SPACE + r"|\\equiv" + _SPACE + r")?"
    + r"(\d{1,12})" + _SPACE + _CLAUSE + r"\s*"
)  # fmt: skip
_GOLD_MODULUS = re.compile(r"mod|\\equiv")
MAX_CHARS = 200
"""Longer answers are no residue clause; the bound keeps the pattern's work small."""


def residue_of(answer: str, gold: str) -> str:
    """``answer`` less its modulus when it is one residue below it (see the module
    docstring), else ``answer`` unchanged; never when ``gold`` states a modulus itself."""
    if len(answer) > MAX_CHARS or "mod" not in answer or _GOLD_MODULUS.search(gold):
        return answer
    m = _RESIDUE.fullmatch(answer)
    if m is None:
        return answer
    residue, modulus = m.group(1), next(g for g in m.groups()[1:] if g is not None)
    return residue if int(residue) < int(modulus) else answer
