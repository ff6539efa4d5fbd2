"""Node tree to comparable values, building sympy objects under size guards.

Every operation that can blow up (integer powers, factorials, binomials, decimal exponents)
is checked *before* sympy is asked to do it, so a value that would exceed ``MAX_BITS`` raises
``TooLarge`` instead of hanging. Decimal literals become exact rationals (``0.5`` is 1/2); the
``approx`` flag remembers that the writer used a decimal, which selects the relative tolerance
for irrational golds.

``\\pm`` makes alternatives: an expression builds to a list of sympy values (usually one), and
the alternatives multiply through the arithmetic (capped at ``MAX_ALTS``).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import sympy

from gymforge.verify.math.lexer import ParseError, TooLarge
from gymforge.verify.math.parser import Node

MAX_BITS = 200_000  # ~60,000 decimal digits for any exact intermediate integer
MAX_FACTORIAL = 5000
MAX_BINOM = 20_000
MAX_ALTS = 16
MAX_ITEMS = 256


@dataclass(frozen=True)
class Scalar:
    expr: Any  # a sympy expression
    approx: bool = False  # written with a decimal literal
    unit: str | None = None


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Rel:
    parts: tuple[Any, ...]  # values
    ops: tuple[str, ...]


@dataclass(frozen=True)
class Bracket:
    """A parenthesised or bracketed sequence: a tuple, a point, or an interval ``(a, b]``."""

    open: str
    close: str
    items: tuple[Any, ...]


@dataclass(frozen=True)
class Coll:
    """``kind``: ``set`` (braces), ``list`` (a bare comma list), ``alt`` ("or", ";") or ``pm``
    (the values of an expression with ``\\pm``)."""

    kind: str
    items: tuple[Any, ...]


@dataclass(frozen=True)
class SetVal:
    """A sympy set: unions, intersections, ``\\mathbb{R}``, the empty set."""

    set: Any


@dataclass(frozen=True)
class Matrix:
    rows: tuple[tuple[Any, ...], ...]


Value = Scalar | Text | Rel | Bracket | Coll | SetVal | Matrix


@dataclass
class _Ctx:
    approx: bool = False
    symbols: dict[str, Any] = field(default_factory=dict)


_FUNCS: dict[str, Any] = {
    "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "sec": sympy.sec, "csc": sympy.csc,
    "cot": sympy.cot, "arcsin": sympy.asin, "arccos": sympy.acos, "arctan": sympy.atan,
    "arcsec": sympy.asec, "arccsc": sympy.acsc, "arccot": sympy.acot, "sinh": sympy.sinh,
    "cosh": sympy.cosh, "tanh": sympy.tanh, "coth": sympy.coth, "ln": sympy.log,
    "log": sympy.log, "exp": sympy.exp,
}  # fmt: skip
_INVERSE = {"sin": "arcsin", "cos": "arccos", "tan": "arctan", "sec": "arcsec", "csc": "arccsc",
            "cot": "arccot"}  # fmt: skip
_SETS = {"R": sympy.S.Reals, "Z": sympy.S.Integers, "N": sympy.S.Naturals,
         "Q": sympy.S.Rationals, "C": sympy.S.Complexes}  # fmt: skip


def build(node: Node) -> Value:
    """The value of a parsed answer."""
    return _value(node, _Ctx())


def _value(node: Node, ctx: _Ctx) -> Value:
    kind = node[0]
    if kind == "alt":
        return Coll("alt", tuple(_value(n, ctx) for n in _cap(node[1])))
    if kind == "list":
        return Coll("list", tuple(_value(n, ctx) for n in _cap(node[1])))
    if kind == "set":
        return Coll("set", tuple(_value(n, ctx) for n in _cap(node[1])))
    if kind == "group":
        items = tuple(_value(n, ctx) for n in _cap(node[3]))
        return Bracket(node[1], node[2], items)
    if kind == "rel":
        return Rel(tuple(_value(n, ctx) for n in node[1]), tuple(node[2]))
    if kind == "text":
        return Text(node[1])
    if kind == "matrix":
        rows = tuple(tuple(_value(c, ctx) for c in _cap(r)) for r in _cap(node[1]))
        return Matrix(rows)
    if kind == "setop":
        a, b = as_set(_value(node[2], ctx)), as_set(_value(node[3], ctx))
        op = {"cup": sympy.Union, "cap": sympy.Intersection, "setminus": sympy.Complement}
        return SetVal(op[node[1]](a, b))
    if kind == "const" and (node[1] == "emptyset" or node[1].startswith("mathbb:")):
        if node[1] == "emptyset":
            return SetVal(sympy.S.EmptySet)
        name = node[1].split(":", 1)[1]
        if name not in _SETS:
            raise ParseError(f"unknown set {name}")
        return SetVal(_SETS[name])
    if kind == "unit":
        inner = _value(node[1], ctx)
        if not isinstance(inner, Scalar):
            raise ParseError("a unit on a non-number")
        return Scalar(inner.expr, inner.approx, node[2])
    sub = _Ctx(symbols=ctx.symbols)
    alts = _expr(node, sub)
    if len(alts) == 1:
        return Scalar(alts[0], sub.approx)
    return Coll("pm", tuple(Scalar(a, sub.approx) for a in alts))


def _cap(items: list[Any]) -> list[Any]:
    if len(items) > MAX_ITEMS:
        raise TooLarge("too many items")
    return items


def as_set(v: Value) -> Any:
    """A value read as a sympy set (operands of ``\\cup``): intervals (ascending, see
    ``_ascending``), finite sets."""
    if isinstance(v, SetVal):
        return v.set
    if isinstance(v, Coll) and v.kind == "set":
        return sympy.FiniteSet(*(_scalar(x) for x in v.items))
    if isinstance(v, Bracket) and len(v.items) == 2 and v.open in "([" and v.close in ")]":
        lo, hi = (_scalar(x) for x in v.items)
        if not (_is_real_number(lo) and _is_real_number(hi)):
            raise ParseError("interval endpoints must be real numbers")
        if not _ascending(lo, hi, v.open == "[" and v.close == "]"):
            raise ParseError("an interval runs from a smaller number to a larger one")
        return sympy.Interval(lo, hi, v.open == "(", v.close == ")")
    raise ParseError("not a set")


def _ascending(lo: Any, hi: Any, closed: bool) -> bool:
    """Whether ``lo`` to ``hi`` is an interval as written: ``lo < hi``, or ``[a, a]`` (one
    point). A pair written backwards (``(8, -4)``, a tuple) or ``(a, a)`` would be the empty
    interval, which every empty answer (``\\varnothing``) equals."""
    if closed and (lo == hi) is True:
        return True
    return (hi - lo).is_extended_positive is True


def _scalar(v: Value) -> Any:
    if isinstance(v, Scalar) and v.unit is None:
        return v.expr
    raise ParseError("expected a number")


def _is_real_number(e: Any) -> bool:
    return bool(e.is_number and (e.is_extended_real or e in (sympy.oo, -sympy.oo)))


# ---- scalar expressions -----------------------------------------------------------------
def _expr(node: Node, ctx: _Ctx) -> list[Any]:
    """All values of ``node`` (several when it contains ``\\pm``)."""
    kind = node[0]
    if kind == "num":
        return [_number(node[1], ctx)]
    if kind == "repdec":
        return [_repeating(node[1], node[2])]
    if kind == "mixed":
        return [sympy.Integer(node[1]) + sympy.Rational(int(node[2]), int(node[3]))]
    if kind == "sym":
        return [_symbol(node[1], ctx)]
    if kind == "const":
        if node[1] == "pi":
            return [sympy.pi]
        if node[1] == "infty":
            return [sympy.oo]
        raise ParseError(f"{node[1]} is not a number")
    if kind == "sum":
        return _sum(node[1], ctx)
    if kind == "prod":
        return _combine([_expr(n, ctx) for _, n in node[1]], _product_of([op for op, _ in node[1]]))
    if kind == "neg":
        return [-a for a in _expr(node[1], ctx)]
    if kind == "pow":
        return _combine([_expr(node[1], ctx), _expr(node[2], ctx)], lambda b, e: guarded_pow(b, e))
    if kind in ("deg", "pct"):  # marks: 90^\circ is 90, 50\% is 50
        return _expr(node[1], ctx)
    if kind == "fact":
        return [_factorial(a, node[2]) for a in _expr(node[1], ctx)]
    if kind == "binom":
        return _combine([_expr(node[1], ctx), _expr(node[2], ctx)], _binom)
    if kind == "sqrt":
        index = [sympy.Integer(2)] if node[2] is None else _expr(node[2], ctx)
        return _combine([_expr(node[1], ctx), index], lambda a, n: guarded_pow(a, 1 / n))
    if kind in ("abs", "floor", "ceil"):
        fn = {"abs": sympy.Abs, "floor": sympy.floor, "ceil": sympy.ceiling}[kind]
        return [fn(a) for a in _expr(node[1], ctx)]
    if kind == "func":
        return _func(node, ctx)
    if kind in ("group", "set", "list", "rel", "text", "matrix", "setop", "alt", "unit"):
        raise ParseError(f"a {kind} inside arithmetic")
    raise ParseError(f"unknown node {kind}")


def _combine(parts: list[list[Any]], fn: Any) -> list[Any]:
    n = math.prod(len(p) for p in parts)
    if n > MAX_ALTS:
        raise TooLarge("too many \\pm alternatives")
    if n == 1:
        return [fn(*(p[0] for p in parts))]
    return [fn(*combo) for combo in itertools.product(*parts)]


def _product_of(ops: list[str]) -> Any:
    def product(*factors: Any) -> Any:
        num = [f for op, f in zip(ops, factors, strict=True) if op == "*"]
        den = [f for op, f in zip(ops, factors, strict=True) if op == "/"]
        if not den:
            return sympy.Mul(*num)
        return sympy.Mul(*num) * guarded_pow(sympy.Mul(*den), sympy.Integer(-1))

    return product


def _sum(terms: list[tuple[str, Node]], ctx: _Ctx) -> list[Any]:
    fixed: list[Any] = []
    variable: list[tuple[str, list[Any]]] = []
    for sign, node in terms:
        vals = _expr(node, ctx)
        if sign in ("+", "-") and len(vals) == 1:
            fixed.append(vals[0] if sign == "+" else -vals[0])
        else:
            variable.append((sign, vals))
    if not variable:
        return [sympy.Add(*fixed)]  # n-ary: a 1,000-term sum is one flat Add
    choices: list[list[Any]] = []
    for sign, vals in variable:
        if sign == "+":
            choices.append(vals)
        elif sign == "-":
            choices.append([-v for v in vals])
        elif sign == "pm":
            choices.append([s * v for s in (1, -1) for v in vals])
        else:
            choices.append([s * v for s in (-1, 1) for v in vals])
    base = sympy.Add(*fixed)
    return _combine(choices, lambda *vs: sympy.Add(base, *vs))


def _number(text: str, ctx: _Ctx) -> Any:
    mant, _, exp = text.lower().partition("e")
    whole, dot, frac = mant.partition(".")
    if dot:
        ctx.approx = True
    value = sympy.Rational(int(whole or "0") * 10 ** len(frac) + int(frac or "0"), 10 ** len(frac))
    if exp:
        ctx.approx = True
        e = int(exp)
        if abs(e) > 10_000:
            raise TooLarge("exponent too large")
        value *= sympy.Integer(10) ** e
    return value


def _repeating(prefix: str, rep: str) -> Any:
    whole, _, frac = prefix.partition(".")
    if len(rep) > 100 or len(frac) > 100:
        raise TooLarge("repeating decimal too long")
    head = sympy.Rational(int(whole or "0") * 10 ** len(frac) + int(frac or "0"), 10 ** len(frac))
    return head + sympy.Rational(int(rep), (10 ** len(rep) - 1) * 10 ** len(frac))


def _symbol(name: str, ctx: _Ctx) -> Any:
    if name == "e":
        return sympy.E
    if name == "i":
        return sympy.I
    if name not in ctx.symbols:
        ctx.symbols[name] = sympy.Symbol(name)
    return ctx.symbols[name]


def _bits(r: Any) -> float:
    """log2 of the larger of |numerator| and denominator of a rational."""
    p, q = abs(int(r.p)), int(r.q)
    m = max(p, q)
    return 0.0 if m <= 1 else float(m.bit_length())


def guarded_pow(b: Any, e: Any) -> Any:
    """``b**e``, refusing exact results beyond ``MAX_BITS`` before computing them."""
    if e.is_Rational and b.is_Rational:
        if b == 0 or abs(b) == 1:
            return b**e if not (b == 0 and e.is_negative) else sympy.zoo
        if abs(e) > MAX_BITS or abs(e) * _bits(b) > MAX_BITS:
            raise TooLarge("power too large")
        if e.q > 1000 or (e.q > 1 and _bits(b) > 256):
            # 2^{0.123456789}, \sqrt{<300 digits>}: sympy would search for exact roots and
            # factors; keep it symbolic (it is compared numerically anyway)
            return sympy.Pow(b, e, evaluate=False)
        return b**e
    if e.is_Rational and b.is_number:
        if abs(e) > MAX_BITS:
            raise TooLarge("power too large")
        if e.q > 1000 or abs(e) > 64:  # (1+\sqrt2)^{10^5}: never expand numerically
            return sympy.Pow(b, e, evaluate=False)
    if e.is_number and (e.has(sympy.oo) or e.has(sympy.zoo)):
        raise ParseError("infinite exponent")
    return sympy.Pow(b, e)


def _factorial(n: Any, k: int) -> Any:
    if n.is_Integer:
        if n < 0:
            raise ParseError("factorial of a negative integer")
        if n > MAX_FACTORIAL:
            raise TooLarge("factorial too large")
        return sympy.factorial(n) if k == 1 else sympy.factorial2(n)
    if n.is_number:
        raise ParseError("factorial of a non-integer")
    return sympy.factorial(n) if k == 1 else sympy.factorial2(n)


def _binom(n: Any, k: Any) -> Any:
    if (n.is_Integer and abs(n) > MAX_BINOM) or (k.is_Integer and abs(k) > MAX_BINOM):
        raise TooLarge("binomial too large")
    if k.is_Integer and not n.is_number and k > 64:
        raise TooLarge("symbolic binomial too large")  # it expands into a degree-k product
    return sympy.binomial(n, k)


def _func(node: Node, ctx: _Ctx) -> list[Any]:
    _, name, arg, base, power = node
    if name == "lg":
        name, base = "log", ("num", "10")
    if power is not None and power == ("neg", ("num", "1")) and name in _INVERSE:
        name, power = _INVERSE[name], None
    fn = _FUNCS[name]
    parts = [_expr(arg, ctx)]
    if base is not None:
        parts.append(_expr(base, ctx))
    if power is not None:
        parts.append(_expr(power, ctx))

    def apply(a: Any, *rest: Any) -> Any:
        if name == "exp" and a.is_number and a.is_extended_real and a > MAX_BITS:
            raise TooLarge("exponential too large")
        v = fn(a, rest[0]) if base is not None else fn(a)
        return guarded_pow(v, rest[-1]) if power is not None else v

    return _combine(parts, apply)
