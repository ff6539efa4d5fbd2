"""Equivalence of an answer and a gold, both as text. Runs inside the pool's workers.

The rules, in the order they apply:

- **Text golds** (``\\text{(B)}``, plain words such as ``Monday``, or a gold this parser
  cannot read, such as ``52_8``) compare as text, case-insensitively, ignoring spaces,
  braces, brackets and punctuation but not signs, ``_``, ``^`` or ``/`` (``text.norm_text``:
  ``528`` is not ``52_8``). A gold with no content (``$$``) equals nothing.
- **Relations.** ``x = 2`` answers gold ``2`` (the left side is a lone variable) and
  ``x \\in S`` answers ``S``; any other equation must hold for every side: ``5=2`` fails gold 2.
  Two equations are equivalent when ``lhs - rhs`` of one is a nonzero constant multiple of
  the other's. Single-variable inequalities compare as the sets they describe.
- **Collections.** Set golds (``\\{1,2\\}``), bare lists (``1, 2``) and alternatives (``1 \\text{
  or } 2``, ``\\pm``) compare as sets, order ignored, against answers of the same three kinds
  only: ``(1,2)`` never answers ``\\{1,2\\}``. A bare list answers a tuple gold in order
  (``3, 5`` answers ``(3, 5)``, unless an endpoint is infinite). A single value and a
  one-element set answer each other. Against any other gold, an answer with several different
  values is a **hedge**, and so is any answer with ``\\pm`` (even ``\\pm 0``).
- **Brackets** (tuples, points, intervals) compare item by item and need the same brackets,
  except at an infinite endpoint. Unions, ``\\mathbb{R}``, inequalities and intervals compare as
  sets. Matrices compare entry by entry; a row or column vector also answers a tuple.
- **Numbers.** A rational gold (integers, fractions, decimals) needs an exactly equal answer:
  0.5 equals 1/2, 0.333333 does not equal 1/3. An irrational gold (pi/2) takes a decimal
  answer within ``rel_tol`` (relative, default 1e-9; never absolute, so 1e-7 is not 0). An
  exact answer that sympy does not reduce to the gold must agree to 25 significant digits
  *and* survive ``numeric.refuted`` (sympy must not prove the difference nonzero), so
  ``\\sqrt2 + 10^{-30}`` and ``1 + e^{-100}`` fail; a zero gold needs an answer that
  simplifies to 0. ``approx_gold=True`` treats every gold as approximate.
- **Expressions** with variables must agree at fixed probe points, two of them complex and
  one derived from the gold's hash, to 20 significant digits, and survive ``refuted`` at an
  exact rational point. Each variable gets its own values, so a case change (``X+1`` for
  ``x+1``) fails.
- **Not read**: percent and degree conversions (``50\\%`` is 50, not 0.5; ``90^\\circ`` is 90,
  not pi/2), unit conversions (500 cm is not 5 m), sums, integrals and limits.
- **Units and words** (``words.classify``). An answer's unit must equal the gold's
  (``5\\text{ km}`` never answers ``5\\text{ m}``); a unit on an answer to a unitless gold
  fails; a gold's unit may be omitted. On a unitless gold, words that only say what was
  counted are ignored (``252 \\text{ ways}`` answers 252), but words that change the value
  or the logic are not (``5 \\text{ thousand}``, ``6 \\text{ not 5}``). Degree marks,
  ``\\%`` and ``percent`` are not units: ``90^\\circ`` equals 90.
- **Implicit multiplication**: juxtaposition multiplies (``3x``, ``2\\pi``, ``2(3)``), and a
  number right after a closing bracket does too (``(n+1)2^n``); two bare numbers never do.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from typing import Any

import sympy

from gymforge.verify.math.lexer import ParseError, TooLarge
from gymforge.verify.math.numeric import PROBE_TOL, Opts, expr_equal, proportional
from gymforge.verify.math.parser import parse
from gymforge.verify.math.sets import direction, lone, rel_to_set, sets_equal
from gymforge.verify.math.text import BLANK_GOLD, blank_gold, norm_text, word_gold
from gymforge.verify.math.values import (
    Bracket,
    Coll,
    Matrix,
    Rel,
    Scalar,
    SetVal,
    Text,
    Value,
    build,
)
from gymforge.verify.math.words import classify, norm_unit

_THOUSANDS = re.compile(r"\s*[-+]?\d{1,3}(,\d{3})+(\.\d+)?\s*")


@dataclass(frozen=True)
class Outcome:
    """``reason`` (when not equal): ``not_equal``, ``unit_mismatch``, ``hedged``,
    ``parse_error`` or ``too_large``; ``detail`` says more, for humans."""

    equal: bool
    reason: str | None = None
    detail: str | None = None


EQ = Outcome(True)
NE = Outcome(False, "not_equal")


def is_equivalent(
    answer: str, gold: str, rel_tol: float = 1e-9, *, approx_gold: bool = False
) -> Outcome:
    """Whether ``answer`` (one extracted final answer) is equivalent to ``gold``.

    Evaluates sympy expressions: call it inside a worker with a hard timeout (the pool does),
    never on the event loop. Size guards run before any evaluation (``too_large``).
    """
    if not rel_tol >= 0:
        raise ValueError("rel_tol must be >= 0")
    if blank_gold(gold):
        return Outcome(False, "parse_error", BLANK_GOLD)
    if _squash(answer) == _squash(gold):
        return EQ
    g = parse_gold(gold)
    if isinstance(g, Text):
        return EQ if norm_text(answer) == norm_text(g.text) else NE
    if _THOUSANDS.fullmatch(answer) and not isinstance(g, Coll | Bracket | Matrix):
        answer = answer.replace(",", "")
    try:
        a = build(parse(answer))
    except TooLarge as e:
        return Outcome(False, "too_large", str(e))
    except (RecursionError, MemoryError):
        return Outcome(False, "too_large", "too deep or too big to build")
    except ParseError as e:
        return Outcome(False, "parse_error", str(e)[:200])
    except Exception as e:  # sympy failing on a strange value it was asked to build
        return Outcome(False, "parse_error", f"cannot build: {type(e).__name__}")
    seed = int.from_bytes(hashlib.blake2b(gold.encode(), digest_size=4).digest(), "big")
    try:
        return compare(a, g, Opts(rel_tol, approx_gold, seed))
    except TooLarge as e:
        return Outcome(False, "too_large", str(e))
    except (RecursionError, MemoryError):
        return Outcome(False, "too_large", "evaluation too large")
    except Exception as e:  # sympy failing on strange values: they are not shown equal
        return Outcome(False, "not_equal", f"comparison failed: {type(e).__name__}")


@functools.lru_cache(maxsize=4096)
def parse_gold(gold: str) -> Value:
    """The gold's value (cached per worker: golds repeat across a group of rollouts). A gold
    this parser cannot read becomes ``Text`` and compares as text."""
    if word_gold(gold):  # Monday: a word, not the product M*o*n*d*a*y
        return Text(gold)
    text = gold.replace(",", "") if _THOUSANDS.fullmatch(gold) else gold
    try:
        return build(parse(text))
    except Exception:
        return Text(gold)


def compare(a: Value, g: Value, o: Opts) -> Outcome:
    """Equivalence of two built values (see the module docstring for the rules)."""
    if isinstance(g, Text) or isinstance(a, Text):
        return _texts(a, g)
    if isinstance(a, Rel) or isinstance(g, Rel):
        return _relations(a, g, o)
    if isinstance(g, Coll):
        return _collections(a, g, o)
    if isinstance(a, Coll):
        return _answer_collection(a, g, o)
    if isinstance(a, Matrix) or isinstance(g, Matrix):
        return _matrices(a, g, o)
    if isinstance(a, SetVal) or isinstance(g, SetVal):
        return EQ if sets_equal(a, g, o) else NE
    if isinstance(a, Bracket) or isinstance(g, Bracket):
        return _brackets(a, g, o)
    assert isinstance(a, Scalar) and isinstance(g, Scalar)
    return _scalars(a, g, o)


def _all(pairs: Any, o: Opts) -> Outcome:
    for x, y in pairs:
        r = compare(x, y, o)
        if not r.equal:
            return r
    return EQ


# ---- text -------------------------------------------------------------------------------
def _squash(s: str) -> str:
    return re.sub(r"\s+|\\[,;:! ]|\\left|\\right", "", s).replace("dfrac", "frac")


def _texts(a: Value, g: Value) -> Outcome:
    """Text against text or a lone symbol: ``\\text{(B)}`` answers ``B``. Case is ignored
    only when the gold is text: a symbol gold ``x`` is not answered by ``\\text{X}``."""
    fold = isinstance(g, Text)

    def text_of(v: Value) -> str | None:
        if isinstance(v, Text):
            return norm_text(v.text, fold)
        if isinstance(v, Scalar) and v.unit is None and v.expr.is_Symbol:
            return norm_text(str(v.expr), fold)
        return None

    ta, tg = text_of(a), text_of(g)
    return EQ if ta is not None and ta == tg else NE


# ---- relations --------------------------------------------------------------------------
def _equated(r: Rel) -> tuple[Any, list[Value]] | None:
    """(the lone variable or None, the values it is equated to) for ``=``/``\\in`` chains."""
    if not all(op in ("=", "approx", "in") for op in r.ops):
        return None
    if lone(r.parts[0]):
        return r.parts[0], list(r.parts[1:])
    if "in" in r.ops:
        return None
    return None, list(r.parts)


def _relations(a: Value, g: Value, o: Opts) -> Outcome:
    if isinstance(a, Rel) and isinstance(g, Rel):
        return _rel_vs_rel(a, g, o)
    if isinstance(a, Rel):
        eq = _equated(a)
        if eq is None:
            s = rel_to_set(a)
            return NE if s is None else compare(SetVal(s), g, o)
        return _all(((v, g) for v in eq[1]), o)
    assert isinstance(g, Rel)
    eq = _equated(g)
    if eq is None:
        s = rel_to_set(g)
        return NE if s is None else compare(a, SetVal(s), o)
    if eq[0] is not None and len(eq[1]) == 1:
        return compare(a, eq[1][0], o)
    return NE


def _rel_vs_rel(a: Rel, g: Rel, o: Opts) -> Outcome:
    ea, eg = _equated(a), _equated(g)
    if ea is not None and eg is not None:
        if ea[0] is not None and eg[0] is not None and ea[0] == eg[0] and len(eg[1]) == 1:
            return _all(((v, eg[1][0]) for v in ea[1]), o)
        if len(a.ops) == len(g.ops) == 1 and a.ops[0] == g.ops[0] == "=":
            return _equations(a, g, o, positive=False)
        return NE
    sa, sg = rel_to_set(a), rel_to_set(g)
    if sa is not None and sg is not None:
        return EQ if sets_equal(SetVal(sa), SetVal(sg), o) else NE
    if len(a.ops) == len(g.ops) == 1 and direction(a.ops[0]) and direction(g.ops[0]):
        return _equations(a, g, o, positive=True)
    return NE


def _equations(a: Rel, g: Rel, o: Opts, positive: bool) -> Outcome:
    """Equivalence of two relations ``l op r`` through ``r - l``: a constant nonzero ratio
    for equations; the same strictness and a positive ratio for inequalities."""
    if not all(isinstance(p, Scalar) and p.unit is None for p in (*a.parts, *g.parts)):
        return NE

    def diff(r: Rel) -> tuple[Any, bool]:
        lhs, rhs = r.parts[0].expr, r.parts[1].expr
        op = r.ops[0]
        return (lhs - rhs, op in ("<", ">")) if op in (">", ">=") else (rhs - lhs, op == "<")

    (da, strict_a), (dg, strict_g) = diff(a), diff(g)
    if positive and strict_a != strict_g:
        return NE
    approx = any(p.approx for p in (*a.parts, *g.parts))
    tol = o.rel_tol if approx else PROBE_TOL
    return EQ if proportional(da, dg, tol, o, positive, exact=not approx) else NE


def _collections(a: Value, g: Coll, o: Opts) -> Outcome:
    if isinstance(a, SetVal) and g.kind == "set":  # \varnothing answers \{\}
        return EQ if sets_equal(a, g, o) else NE
    if not isinstance(a, Coll):
        if len(g.items) == 1:  # "3" answers {3}: one root of a double root, say
            return compare(a, g.items[0], o)
        return NE
    if len(a.items) * len(g.items) > 4096:
        raise TooLarge("collections too large to compare")
    memo: dict[tuple[int, int], bool] = {}

    def eq(i: int, j: int) -> bool:
        if (i, j) not in memo:
            memo[i, j] = compare(a.items[i], g.items[j], o).equal
        return memo[i, j]

    na, ng = range(len(a.items)), range(len(g.items))
    if len(a.items) == len(g.items) == 1:
        return compare(a.items[0], g.items[0], o)
    ok = all(any(eq(i, j) for j in ng) for i in na) and all(any(eq(i, j) for i in na) for j in ng)
    return EQ if ok else NE


def _answer_collection(a: Coll, g: Value, o: Opts) -> Outcome:
    if a.kind == "set" and isinstance(g, SetVal):  # \{\} answers \emptyset
        return EQ if sets_equal(a, g, o) else NE
    if a.kind == "set":
        return compare(a.items[0], g, o) if len(a.items) == 1 else NE
    if (
        isinstance(g, Bracket)
        and (g.open, g.close) == ("(", ")")
        and a.kind == "list"
        and len(a.items) == len(g.items)
        and not any(_is_inf(x, 1) or _is_inf(x, -1) for x in g.items)
    ):  # "3, 5" and "x=3, y=5" answer the tuple (3, 5); nothing answers the interval (3, oo)
        return _all(zip(a.items, g.items, strict=True), o)
    first = a.items[0]
    if a.kind != "pm" and all(compare(x, first, o).equal for x in a.items[1:]):
        return compare(first, g, o)
    return Outcome(False, "hedged", "several different values for a single answer")


# ---- brackets, sets, matrices -----------------------------------------------------------
def _is_inf(v: Value, sign: int) -> bool:
    return isinstance(v, Scalar) and v.expr == sign * sympy.oo


def _brackets(a: Value, g: Value, o: Opts) -> Outcome:
    if not (isinstance(a, Bracket) and isinstance(g, Bracket)):
        return NE
    if len(a.items) != len(g.items):
        return NE
    same_open = a.open == g.open or (len(g.items) == 2 and _is_inf(g.items[0], -1))
    same_close = a.close == g.close or (len(g.items) == 2 and _is_inf(g.items[1], 1))
    if not (same_open and same_close):
        return NE
    return _all(zip(a.items, g.items, strict=True), o)


def _matrices(a: Value, g: Value, o: Opts) -> Outcome:
    if isinstance(a, Matrix) and isinstance(g, Matrix):
        if len(a.rows) != len(g.rows) or len(a.rows[0]) != len(g.rows[0]):
            return NE
        return _all(((x, y) for ra, rg in zip(a.rows, g.rows, strict=True)
                     for x, y in zip(ra, rg, strict=True)), o)  # fmt: skip
    m, t = (a, g) if isinstance(a, Matrix) else (g, a)
    assert isinstance(m, Matrix)
    if not (isinstance(t, Bracket) and (t.open, t.close) in (("(", ")"), ("langle", "rangle"))):
        return NE
    flat = [x for row in m.rows for x in row]
    if min(len(m.rows), len(m.rows[0])) != 1 or len(flat) != len(t.items):
        return NE
    pairs = zip(flat, t.items, strict=True) if m is a else zip(t.items, flat, strict=True)
    return _all(pairs, o)


# ---- scalars ----------------------------------------------------------------------------
def _scalars(a: Scalar, g: Scalar, o: Opts) -> Outcome:
    ua, ug = norm_unit(a.unit), norm_unit(g.unit)
    if ug is not None and classify(g.unit or "") == "descriptive":
        ug = None  # a gold "252 ways" states no unit either
    if ua is not None and ua != ug:
        kind = classify(a.unit or "")
        if ug is not None or kind != "descriptive":
            what = "words that change the value" if kind == "changes" else "unit"
            return Outcome(False, "unit_mismatch", f"{what} {a.unit!r}, gold unit {ug!r}")
    return EQ if expr_equal(a.expr, g.expr, a.approx, g.approx, o) else NE
