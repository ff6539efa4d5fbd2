"""Sets of real numbers: intervals, unions and the single-variable relations that describe
them (``1 < x \\le 3`` is ``(1, 3]``), compared piece by piece after sympy's canonical form."""

from __future__ import annotations

from typing import Any

import sympy

from gymforge.verify.math.lexer import ParseError
from gymforge.verify.math.numeric import Opts, expr_equal
from gymforge.verify.math.values import Rel, Scalar, Value, as_set


def lone(v: Value) -> bool:
    """A bare variable, as on the left of ``x = 2``."""
    return isinstance(v, Scalar) and v.unit is None and bool(v.expr.is_Symbol)


def direction(op: str) -> bool:
    """An inequality operator."""
    return op in ("<", "<=", ">", ">=")


def rel_to_set(r: Rel) -> Any | None:
    """The set of real values of the single variable a relation chain allows, or None."""
    if len(r.parts) == 2 and r.ops[0] == "in" and lone(r.parts[0]):
        try:
            return as_set(r.parts[1])
        except ParseError:
            return None
    syms = [i for i, p in enumerate(r.parts) if lone(p)]
    if len(syms) != 1 or not all(direction(op) or op == "!=" for op in r.ops):
        return None
    out = sympy.S.Reals
    for k, op in enumerate(r.ops):
        left, right = r.parts[k], r.parts[k + 1]
        if k != syms[0] and k + 1 != syms[0]:
            return None  # 1 < 2 < x: a constant comparison inside the chain
        other = right if k == syms[0] else left
        if not isinstance(other, Scalar) or other.unit or not _real(other.expr):
            return None
        c = other.expr
        if k != syms[0]:  # c op x: flip to x op' c
            op = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}[op]
        piece = {
            "<": sympy.Interval(-sympy.oo, c, True, True),
            "<=": sympy.Interval(-sympy.oo, c, True, False),
            ">": sympy.Interval(c, sympy.oo, True, True),
            ">=": sympy.Interval(c, sympy.oo, False, True),
            "!=": sympy.Complement(sympy.S.Reals, sympy.FiniteSet(c)),
        }[op]
        out = sympy.Intersection(out, piece)
    return out


def _real(e: Any) -> bool:
    return bool(e.is_number and e.is_extended_real)


# ---- collections ------------------------------------------------------------------------
def _pieces(s: Any) -> list[tuple[Any, ...]] | None:
    """A canonical sympy set as sorted pieces: intervals and points; None if unsupported."""
    if s is sympy.S.EmptySet:
        return []
    if isinstance(s, sympy.Interval):
        return [("iv", s.start, s.end, bool(s.left_open), bool(s.right_open))]
    if isinstance(s, sympy.FiniteSet):
        return sorted((("pt", x) for x in s.args), key=lambda p: _key(p[1]))
    if isinstance(s, sympy.Union):
        out: list[tuple[Any, ...]] = []
        for arg in s.args:
            sub = _pieces(arg)
            if sub is None:
                return None
            out += sub
        return sorted(out, key=lambda p: _key(p[1]))
    return None


def _key(x: Any) -> float:
    return float(x.evalf(20)) if x.is_extended_real else float("nan")


def sets_equal(a: Value, g: Value, o: Opts) -> bool:
    try:
        sa, sg = as_set(a), as_set(g)
    except ParseError:
        return False
    if sa == sg:
        return True
    pa, pg = _pieces(sa), _pieces(sg)
    if pa is None or pg is None or len(pa) != len(pg):
        return False
    for x, y in zip(pa, pg, strict=True):
        if x[0] != y[0]:
            return False
        if x[0] == "pt":
            if not expr_equal(x[1], y[1], False, False, o):
                return False
            continue
        for k in (1, 2):
            if not (x[k] == y[k] or expr_equal(x[k], y[k], False, False, o)):
                return False
        if x[3:] != y[3:]:
            return False
    return True
