"""The knights-and-knaves statement grammar: truth, negation, solution counting, row terms.

Terms are JSON lists over islander indices: atoms ``["is", i, "knight"|"knave"]``,
``["same", i, j]``, ``["diff", i, j]``, ``["atleast", k]``, ``["atmost", k]`` (knights among
all islanders), and connectives ``["not", a]``, ``["and", a, b, ...]``, ``["or", a, b, ...]``,
``["implies", a, b]``, ``["iff", a, b]`` (version 1 used only binary ``and``/``or`` of atoms).
``term`` reads a dataset row's statement, in this grammar or in reasoning-gym's.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

ATOMS = ("is", "same", "diff", "atleast", "atmost")
CONNECTIVES = {"and": (2, 8), "or": (2, 8), "not": (1, 1), "implies": (2, 2), "iff": (2, 2)}
"""Connective -> (min, max) number of operands."""
RG_OPS = {"->": "implies", "<=>": "iff", "not": "not", "and": "and", "or": "or"}
MAX_TERM_NODES = 200
Stmt = list[Any]


def holds(s: Stmt, knights: Sequence[bool]) -> bool:
    """The truth of statement ``s`` when ``knights[i]`` says whether islander i is a knight."""
    op = s[0]
    if op == "is":
        return bool(knights[s[1]] == (s[2] == "knight"))
    if op == "same":
        return knights[s[1]] == knights[s[2]]
    if op == "diff":
        return knights[s[1]] != knights[s[2]]
    if op == "atleast":
        return bool(sum(knights) >= s[1])
    if op == "atmost":
        return bool(sum(knights) <= s[1])
    if op == "and":
        return all(holds(x, knights) for x in s[1:])
    if op == "or":
        return any(holds(x, knights) for x in s[1:])
    if op == "not":
        return not holds(s[1], knights)
    if op == "implies":
        return not holds(s[1], knights) or holds(s[2], knights)
    return holds(s[1], knights) == holds(s[2], knights)  # iff


def negate(s: Stmt) -> Stmt:
    """A statement of the same grammar that is true exactly when ``s`` is false."""
    op = s[0]
    if op == "is":
        return ["is", s[1], "knave" if s[2] == "knight" else "knight"]
    if op in ("same", "diff"):
        return ["diff" if op == "same" else "same", s[1], s[2]]
    if op == "atleast":
        return ["atmost", s[1] - 1]
    if op == "atmost":
        return ["atleast", s[1] + 1]
    if op == "not":
        inner: Stmt = s[1]
        return inner
    if op == "implies":
        return ["and", s[1], negate(s[2])]
    if op == "iff":
        return ["iff", s[1], negate(s[2])]
    return ["or" if op == "and" else "and", *(negate(x) for x in s[1:])]


@lru_cache(maxsize=16)
def _tables(n: int) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """Bitsets over the 2^n assignments (bit ``a`` = assignment ``a``, whose bit i says
    islander i is a knight): everything, "i is a knight", and "at least k knights"."""
    m = 1 << n
    knight = tuple(sum(1 << a for a in range(m) if a >> i & 1) for i in range(n))
    at_least = tuple(sum(1 << a for a in range(m) if a.bit_count() >= k) for k in range(n + 2))
    return (1 << m) - 1, knight, at_least


def _sat(s: Stmt, n: int) -> int:
    full, knight, at_least = _tables(n)
    op = s[0]
    if op == "is":
        return knight[s[1]] if s[2] == "knight" else full ^ knight[s[1]]
    if op == "same":
        return full ^ knight[s[1]] ^ knight[s[2]]
    if op == "diff":
        return knight[s[1]] ^ knight[s[2]]
    if op == "atleast":
        return at_least[s[1]]
    if op == "atmost":
        return full ^ at_least[int(s[1]) + 1]
    parts = [_sat(x, n) for x in s[1:]]
    if op == "and":
        out = full
        for p in parts:
            out &= p
        return out
    if op == "or":
        out = 0
        for p in parts:
            out |= p
        return out
    if op == "not":
        return full ^ parts[0]
    if op == "implies":
        return (full ^ parts[0]) | parts[1]
    return full ^ parts[0] ^ parts[1]  # iff


def _consistent(speaker: int, s: Stmt, n: int) -> int:
    full, knight, _ = _tables(n)
    return full ^ knight[speaker] ^ _sat(s, n)


def count_solutions(statements: Sequence[Stmt]) -> int:
    """How many assignments make every speaker's statement match their kind."""
    n = len(statements)
    sol = _tables(n)[0]
    for speaker, s in enumerate(statements):
        sol &= _consistent(speaker, s, n)
    return sol.bit_count()


def term(s: Any, n: int, budget: list[int]) -> Stmt:
    """A dataset row's statement as a term of this grammar (reasoning-gym's spelling is
    translated); ValueError for anything malformed. ``budget`` caps the total term size."""
    budget[0] -= 1
    if budget[0] < 0:
        raise ValueError(f"statements larger than {MAX_TERM_NODES} terms")
    if not isinstance(s, list | tuple) or not s or not isinstance(s[0], str):
        raise ValueError(f"a statement must be a list like ['is', 0, 'knight'], got {s!r:.60}")
    op, args = s[0], list(s[1:])

    def person(x: Any) -> int:
        if type(x) is not int or not 0 <= x < n:
            raise ValueError(f"{op!r} names islander {x!r}; islanders are 0..{n - 1}")
        return x

    if op in ("telling-truth", "lying") and len(args) == 1:
        return ["is", person(args[0]), "knight" if op == "telling-truth" else "knave"]
    if op == "is" and len(args) == 2 and args[1] in ("knight", "knave"):
        return ["is", person(args[0]), args[1]]
    if op in ("same", "diff") and len(args) == 2:
        return [op, person(args[0]), person(args[1])]
    if op in ("atleast", "atmost") and len(args) == 1 and type(args[0]) is int:
        return [op, args[0]]
    name = RG_OPS.get(op, op)
    if name in CONNECTIVES:
        lo, hi = CONNECTIVES[name]
        if not lo <= len(args) <= hi:
            raise ValueError(f"{op!r} takes {lo}..{hi} operands, got {len(args)}")
        return [name, *(term(a, n, budget) for a in args)]
    raise ValueError(f"unknown statement {op!r} with {len(args)} operands")
