"""The form of an answer, as a task may demand it: read on the parse tree, never evaluated.

``FORMS``:

- ``integer``: an integer numeral (``12``, ``-7``, ``1{,}000``), not ``12.0``, ``\\frac{24}{2}``
  or ``2^3``;
- ``reduced_fraction``: an integer, or one fraction ``p/q`` of integers in lowest terms with
  ``q > 1`` (``\\frac{3}{4}``, ``-\\frac34``, ``\\frac{-3}{4}``, ``3/4``); not ``\\frac{6}{8}``,
  ``0.75``, ``1\\frac{1}{2}`` or ``\\frac{4}{1}``;
- ``simplest_radical``: integers and radicals ``c\\sqrt[k]{n}`` with ``n > 1`` free of k-th
  powers, no radical in a denominator, no two terms with the same radical, every fraction
  in lowest terms (``\\frac{3\\sqrt2}{4}``, ``\\frac{1+\\sqrt5}{2}``, ``2\\sqrt3 - 1``); not
  ``\\sqrt{8}``, ``\\frac{1}{\\sqrt2}``, ``\\frac{2+2\\sqrt5}{4}`` or ``\\sqrt4``.

An answer ``x = ...`` is judged by its right side, an equation chain ``a = b = c`` by its
last side (from math 1.3.0: ``3 \\cdot 4 = 12`` is 12, ``\\frac{6}{8} = \\frac{3}{4}`` is 3/4;
the value check holds every side to the gold), and trailing words or units are ignored
(the value check judges them). ``check_form`` returns ``(ok, why_not)``.

``written_number`` says whether an answer is a number written out at all (a numeral, a
decimal, one fraction of two numerals, a mixed number, ``d \\times 10^{k}``), whatever its
notation: what a task that demands ``integer`` or ``reduced_fraction`` (``NUMBER_FORMS``)
needs before its value counts. Anything else (``1 + 2``, ``2^3``, the question's expression
copied) leaves the task's computation to the verifier.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from gymforge.verify.math.lexer import ParseError, TooLarge
from gymforge.verify.math.parser import Node, parse

FORMS = frozenset({"integer", "reduced_fraction", "simplest_radical"})
NUMBER_FORMS = frozenset({"integer", "reduced_fraction"})
"""Forms that ask for a number: an answer to such a task must be ``written_number``."""
MAX_RADICAND = 10**12
_GROUPED = re.compile(r"\s*[-+]?\d{1,3}(,\d{3})+(\.\d+)?\s*")  # as the value check reads
_SPACE_MARK = re.compile("[ \u00a0\u2009\u202f]")  # a space, a no-break or a thin space
_SPACED = re.compile(rf"\s*[-+]?\d{{1,3}}({_SPACE_MARK.pattern}\d{{3}})+(\.\d+)?\s*")
"""SI and French thousands: ``1 000 000`` set off by any of ``_SPACE_MARK``."""
_LITERALS = frozenset({"num", "repdec", "mixed"})


class _NotForm(Exception):
    """Why the answer is not in the demanded form."""


def check_form(answer: str, form: str) -> tuple[bool, str | None]:
    """Whether ``answer`` is written in ``form`` (one of ``FORMS``), and if not, why."""
    if form not in FORMS:
        raise ValueError(f"unknown answer form {form!r}")
    try:
        node = _subject(parse(_ungrouped(answer)))
        {"integer": _integer, "reduced_fraction": _fraction, "simplest_radical": _radical}[form](
            node
        )
    except (ParseError, TooLarge) as err:
        return False, f"unreadable: {err}"[:200]
    except _NotForm as err:
        return False, str(err)
    return True, None


def written_number(answer: str) -> bool:
    """Whether ``answer`` (its subject: ``x = ...`` and trailing words dropped) is one number
    written out, with at most one sign: a numeral or decimal (``12``, ``0.75``, ``1.2e3``,
    ``0.\\overline{3}``), a mixed number, one fraction of two such (``\\frac{6}{8}``,
    ``-3/4``) or ``d \\times 10^{k}``. Read on the parse tree, never evaluated."""
    try:
        node = _subject(parse(_ungrouped(answer)))
    except (ParseError, TooLarge):
        return False
    body = _one_sign(node)
    if _literal(body):
        return True
    if body[0] != "prod" or len(body[1]) != 2:
        return False
    (op1, a), (op2, b) = body[1]
    if op1 != "*" or not _literal(_one_sign(a)):
        return False
    if op2 == "/":
        return _literal(_one_sign(b))
    return op2 == "*" and b[0] == "pow" and b[1] == ("num", "10") and _int_of(b[2]) is not None


def _ungrouped(answer: str) -> str:
    """``answer`` with its thousands separators dropped when it is one grouped number
    (``1,000``, ``1 000``, ``1\u2009000``), as the value check reads it; else as written."""
    if _GROUPED.fullmatch(answer):
        return answer.replace(",", "")
    if _SPACED.fullmatch(answer):  # thousands set off by spaces (SI, French): one number
        return _SPACE_MARK.sub("", answer)
    return answer


def _one_sign(node: Node) -> Node:
    """``node`` less one leading sign (``-3``, ``+3``); a second sign is arithmetic."""
    inner: Node = node
    if node[0] == "neg":
        inner = node[1]
    elif node[0] == "sum" and len(node[1]) == 1:
        inner = node[1][0][1]
    return inner


def _literal(node: Node) -> bool:
    return node[0] in _LITERALS


def _subject(node: Node) -> Node:
    """The part of the answer whose form counts: ``x = 3/4`` is 3/4, ``5 \\text{ ways}`` 5,
    an equation chain its last side (``\\frac{6}{8} = \\frac{3}{4}`` is 3/4; the value check
    holds every side to the gold's value, so the chain says nothing its last side does not)."""
    if node[0] == "rel" and set(node[2]) == {"="}:
        node = node[1][-1]
    while node[0] in ("unit", "deg", "pct"):
        node = node[1]
    return node


def _int_of(node: Node) -> int | None:
    """The integer an integer numeral (possibly negated) denotes, else None."""
    sign = 1
    while True:
        if node[0] == "neg":
            sign, node = -sign, node[1]
        elif node[0] == "sum" and len(node[1]) == 1 and node[1][0][0] in "+-":
            sign, node = (sign if node[1][0][0] == "+" else -sign), node[1][0][1]
        else:
            break
    if node[0] == "num" and node[1].isdigit():
        return sign * int(node[1])
    return None


def _integer(node: Node) -> None:
    if _int_of(node) is None:
        raise _NotForm("not an integer numeral")


def _split_sign(node: Node) -> tuple[int, Node]:
    if node[0] == "neg":
        s, inner = _split_sign(node[1])
        return -s, inner
    if node[0] == "sum" and len(node[1]) == 1 and node[1][0][0] in "+-":
        s, inner = _split_sign(node[1][0][1])
        return (s if node[1][0][0] == "+" else -s), inner
    return 1, node


def _fraction(node: Node) -> None:
    if _int_of(node) is not None:
        return
    _, body = _split_sign(node)
    if body[0] != "prod" or len(body[1]) != 2 or [op for op, _ in body[1]] != ["*", "/"]:
        raise _NotForm("not a single fraction of integers")
    p, q = _int_of(body[1][0][1]), _int_of(body[1][1][1])
    if p is None or q is None:
        raise _NotForm("numerator and denominator must be integers")
    if q in (0, 1, -1):
        raise _NotForm("an integer written as a fraction")
    if math.gcd(p, q) != 1:
        raise _NotForm(f"{p}/{q} is not in lowest terms")


@dataclass
class _Term:
    """``sign * num / den * radical`` with ``radical = (index, radicand)`` or None."""

    num: int = 1
    den: int = 1
    radical: tuple[int, int] | None = None
    written: list[int] = field(default_factory=list)  # numerator integers as written


def _radical(node: Node) -> None:
    _, body = _split_sign(node)
    if body[0] == "prod" and [op for op, _ in body[1]] == ["*", "/"]:
        den = _int_of(body[1][1][1])
        top = body[1][0][1]
        if den is not None and top[0] == "sum":  # (a + b\sqrt c) / d over one denominator
            terms = [_term(n) for _, n in top[1]]
            if den <= 1:
                raise _NotForm("the denominator must be an integer above 1")
            if any(t.den != 1 for t in terms):
                raise _NotForm("a fraction inside a fraction")
            if math.gcd(den, *(t.num for t in terms)) != 1:
                raise _NotForm("the fraction is not in lowest terms")
            _distinct(terms)
            return
    terms = [_term(n) for _, n in body[1]] if body[0] == "sum" else [_term(body)]
    for t in terms:
        if math.gcd(t.num, t.den) != 1:
            raise _NotForm(f"{t.num}/{t.den} is not in lowest terms")
    _distinct(terms)


def _distinct(terms: list[_Term]) -> None:
    seen = [t.radical for t in terms]
    if len(set(seen)) != len(seen):
        raise _NotForm("like terms not combined")


def _term(node: Node) -> _Term:
    t = _Term()
    _factors(node, t, "*")
    return t


def _factors(node: Node, t: _Term, op: str) -> None:
    """Fold one factor of a term into ``t`` (``op``: ``*`` numerator, ``/`` denominator)."""
    n = _int_of(node)
    if n is not None:
        if op == "*":
            t.num *= abs(n)
        else:
            if n == 0:
                raise _NotForm("division by zero")
            t.den *= abs(n)
        return
    kind = node[0]
    if kind == "prod":
        for sub_op, sub in node[1]:
            _factors(sub, t, "/" if (sub_op == "/") != (op == "/") else "*")
        return
    if kind in ("neg", "sum") and _split_sign(node)[1] is not node:
        _factors(_split_sign(node)[1], t, op)
        return
    if kind == "sqrt":
        if op == "/":
            raise _NotForm("a radical in the denominator")
        if t.radical is not None:
            raise _NotForm("two radicals in one term")
        index = 2 if node[2] is None else _int_of(node[2])
        radicand = _int_of(node[1])
        if index is None or index < 2 or radicand is None:
            raise _NotForm("radicals must be integer roots of integers")
        if radicand < 2:
            raise _NotForm(f"\\sqrt{{{radicand}}} simplifies")
        if radicand > MAX_RADICAND:
            raise _NotForm("radicand too large to judge")
        if not _power_free(radicand, index):
            raise _NotForm(f"the radicand {radicand} has a factor that is a perfect power")
        t.radical = (index, radicand)
        return
    raise _NotForm(f"a {kind} is not part of a simplest radical form")


def _power_free(n: int, k: int) -> bool:
    import sympy  # the worker has it loaded; factoring is bounded by MAX_RADICAND

    factors: dict[Any, int] = sympy.factorint(n)
    return all(e < k for e in factors.values())
