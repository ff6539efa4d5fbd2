"""Numeric equivalence of sympy expressions: exact where sympy can decide, else at high
precision; expressions with variables at probe points. Runs inside the pool's workers."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
import sympy

TIGHT = 1e-25  # "exact" for values sympy cannot prove equal: 25 digits at 50-digit precision
PROBE_TOL = 1e-20


@dataclass(frozen=True)
class Opts:
    """Per-comparison settings: ``rel_tol`` for approximate values, ``approx_gold`` to treat
    every gold as approximate, ``seed`` (from the gold's hash) for one probe point."""

    rel_tol: float
    approx_gold: bool
    seed: int


def expr_equal(ea: Any, eg: Any, a_approx: bool, g_approx: bool, o: Opts) -> bool:
    if ea == eg:
        return True
    bad = (sympy.nan, sympy.zoo, sympy.oo, -sympy.oo)
    if any(ea.has(b) or eg.has(b) for b in bad):
        return False  # infinities only equal themselves, structurally
    approx = a_approx or g_approx or o.approx_gold
    if ea.free_symbols or eg.free_symbols:  # X+1 and x+1 differ at the probe points
        tol = o.rel_tol if approx else PROBE_TOL
        return proportional(ea, eg, tol, o, ratio_one=True, exact=not approx)
    if eg.is_Rational and not o.approx_gold:
        if ea.is_Rational:
            return bool(ea == eg)
        if eg == 0:
            return _is_zero(ea)
        return _close(ea, eg, TIGHT) and not refuted(ea - eg)
    if approx:
        return _close(ea, eg, o.rel_tol)
    return _close(ea, eg, TIGHT) and not refuted(ea - eg)


def _mpc(e: Any, dps: int, subs: dict[Any, Any] | None = None) -> Any:
    """``e`` as an mpmath complex at ``dps`` digits, or None if it is not a finite number."""
    try:
        v = e.evalf(dps, subs=subs) if subs else e.evalf(dps)
    except (ValueError, TypeError, ArithmeticError):  # sympy's evalf on inf/nan corners
        return None
    if not v.is_number or v.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
        return None
    re_, im_ = v.as_real_imag()
    if not (re_.is_Number and im_.is_Number):
        return None
    return mpmath.mpc(sympy.Float(re_, dps)._mpf_, sympy.Float(im_, dps)._mpf_)


def _close(ea: Any, eg: Any, tol: float) -> bool:
    dps = 50
    with mpmath.workdps(dps):
        va, vg = _mpc(ea, dps), _mpc(eg, dps)
        if va is None or vg is None:
            return False
        return bool(abs(va - vg) <= tol * abs(vg))


def _is_zero(e: Any) -> bool:
    with mpmath.workdps(50):
        v = _mpc(e, 50)
        if v is None or abs(v) > mpmath.mpf(10) ** -40:
            return False
    return bool(sympy.simplify(e) == 0)


_REAL_POINTS = ("0.57721566490153286060651209", "-1.2599210498948731647672106",
                "2.2360679774997896964091737")  # fmt: skip
_COMPLEX_POINT = ("0.61803398874989484820458683", "0.41421356237309504880168872")


def _points(symbols: list[Any], seed: int) -> list[dict[Any, Any]]:
    """Probe points: fixed generic values plus one from the gold's hash, per symbol."""
    pts: list[dict[Any, Any]] = []
    for k, base in enumerate(_REAL_POINTS):
        pts.append({s: sympy.Float(base, 30) + sympy.Rational(j + k, 7) for j, s in
                    enumerate(symbols)})  # fmt: skip
    re_, im_ = (sympy.Float(x, 30) for x in _COMPLEX_POINT)
    pts.append({s: re_ + j * sympy.Rational(1, 3) + im_ * sympy.I for j, s in enumerate(symbols)})
    pts.append({s: re_ - sympy.Rational(j + 1, 5) - im_ * sympy.I for j, s in enumerate(symbols)})
    hashed = sympy.Rational(seed % 1_000_003, 1_000_003) * 3 - sympy.Rational(3, 2)
    pts.append({s: sympy.Float(hashed + sympy.Rational(j, 11), 30) for j, s in enumerate(symbols)})
    return pts


def proportional(
    da: Any,
    dg: Any,
    tol: float,
    o: Opts,
    positive: bool = False,
    ratio_one: bool = False,
    exact: bool = False,
) -> bool:
    """Whether ``da/dg`` is the same nonzero constant at every probe point (exactly 1 when
    ``ratio_one``; positive when ``positive``). With ``exact``, a match must also survive
    ``refuted``: probes at 1e-20 cannot see an offset of 10^{-30}."""
    if da == 0 or dg == 0:
        return bool(da == dg)
    if not (da.free_symbols | dg.free_symbols):
        return bool(da == dg) if not ratio_one else _close(da, dg, tol)
    r0 = _probe_ratio(da, dg, tol, o, ratio_one)
    if r0 is None or (positive and not (abs(r0.imag) <= tol * abs(r0) and r0.real > 0)):
        return False
    if not exact:
        return True
    k = sympy.Integer(1) if ratio_one else _nice_rational(r0)
    return k is None or not refuted(sympy.expand(da - k * dg))


def _probe_ratio(da: Any, dg: Any, tol: float, o: Opts, ratio_one: bool) -> Any | None:
    syms = sorted(da.free_symbols | dg.free_symbols, key=str)
    r0 = mpmath.mpf(1) if ratio_one else None
    seen = 0
    with mpmath.workdps(40):
        for p in _points(syms, o.seed):
            va, vg = _mpc(da, 40, p), _mpc(dg, 40, p)
            if va is None and vg is None:
                continue
            if va is None or vg is None:
                return None
            if vg == 0:
                if va != 0:
                    return None
                continue
            r = va / vg
            if r0 is None:
                r0 = r
                if r0 == 0:
                    return None
            elif abs(r - r0) > tol * abs(r0):
                return None  # most unequal answers stop at the first point
            seen += 1
    if seen < 2:
        return r0 if ratio_one and sympy.simplify(da - dg) == 0 else None
    return r0


def _nice_rational(r: Any) -> Any | None:
    """``r`` (an mpc) as a small-denominator rational, or None if it is not one."""
    if abs(r.imag) > 1e-15 * abs(r):
        return None
    x = float(r.real)
    q = Fraction(x).limit_denominator(10**6)
    return sympy.Rational(q.numerator, q.denominator) if abs(q - x) <= 1e-12 * abs(x) else None


_EXACT_POINTS = (sympy.Rational(13, 7), sympy.Rational(-5, 11), sympy.Rational(17, 9))


def refuted(d: Any) -> bool:
    """Whether sympy proves that ``d`` (numerically ~0) is not zero: the tiny offsets a
    tolerance cannot see (``\\sqrt2 + 10^{-30}``, ``1 + e^{-100}``, ``x + 10^{-30}x``). Undecided
    is not refuted: numeric agreement then stands."""
    if d == 0:
        return False
    syms = d.free_symbols
    if syms and d.is_rational_function(*syms):  # decidable, and cheap: cancel to 0 or not
        return bool(sympy.cancel(d) != 0)
    if any(t.is_zero is False for t in _exact_trials(d)):
        return True
    s = sympy.simplify(d)  # a transcendental identity (sin^2 + cos^2 = 1): rare, slower
    return s != 0 and any(t.is_zero is False for t in _exact_trials(s))


def _exact_trials(d: Any) -> list[Any]:
    syms = sorted(d.free_symbols, key=str)
    if not syms:
        return [d]
    t = d.subs({s: _EXACT_POINTS[j % 3] + j // 3 for j, s in enumerate(syms)})
    return [] if t.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo) else [t]
