"""Each puzzle checker agrees with an independent reference on random candidate solutions.

A checker that verifies the wrong constraint (a sudoku whose givens may change, a colouring
that skips an edge, a path with a missing edge or longer than the shortest, a labelling that
breaks a clue, a countdown reusing a number or going negative where the task forbids it)
pays answers that solve nothing. Here random candidates, most of them invalid, are judged
both by the family's ``check`` (current and older versions) and by a reference written from
the puzzle's rules alone; every verdict must agree. Seeded, so the sample is the same on
every run (about 5,000 candidates, about a second)."""

from __future__ import annotations

import ast
import random
from collections import Counter
from fractions import Fraction
from itertools import pairwise
from typing import Any

from gymforge.envs.puzzles import coloring, shortest_path
from gymforge.verify.puzzles import countdown, knights_knaves, sudoku
from gymforge.verify.puzzles.kk_logic import holds

TASKS = 12
CANDIDATES = 25


def _truths(family: Any) -> list[Any]:
    return [family.truth_of(family.task(d, s)) for d in sorted(family.levels) for s in range(TASKS)]


def _agree(family: Any, truth: Any, answer: str, valid: bool) -> bool:
    outcome = family.check(truth, answer)
    assert outcome.passed == valid, (family.name, family.version, answer, outcome)
    return valid


def test_knights_knaves_pays_exactly_the_consistent_labellings() -> None:
    r, paid = random.Random(1), 0
    for family in (knights_knaves.FAMILY, knights_knaves.V1):
        for t in _truths(family):
            for _ in range(CANDIDATES):
                knights = [r.random() < 0.5 for _ in t.names]
                valid = all(holds(s, knights) == knights[i] for i, s in enumerate(t.statements))
                form = "{}={}" if family.version < 2 else r.choice(["{}={}", "{} is a {}"])
                labels = [
                    form.format(n, "knight" if k else "knave")
                    for n, k in zip(t.names, knights, strict=True)
                ]
                paid += _agree(family, t, ", ".join(labels), valid)
    assert paid  # some random labellings are consistent, and those pass


def test_coloring_pays_exactly_the_proper_colourings() -> None:
    r, paid = random.Random(2), 0
    for family in (coloring.FAMILY, coloring.V1):
        for t in _truths(family):
            where = {v: i for i, v in enumerate(t.nodes)}
            for _ in range(CANDIDATES):
                colors = [c if r.random() < 0.8 else r.randint(0, t.colors + 1) for c in t.solution]
                valid = all(1 <= c <= t.colors for c in colors) and all(
                    colors[where[u]] != colors[where[v]] for u, v in t.edges
                )
                answer = ", ".join(f"{v}={c}" for v, c in zip(t.nodes, colors, strict=True))
                paid += _agree(family, t, answer, valid)
    assert paid


def test_shortest_path_pays_exactly_the_shortest_walks() -> None:
    r, paid = random.Random(3), 0
    for family in (shortest_path.FAMILY, shortest_path.V1):
        for t in _truths(family):
            adj = shortest_path.adjacency(t.nodes, t.edges)
            w = shortest_path.weights(t.edges)
            for _ in range(CANDIDATES):
                walk = [t.source]
                while walk[-1] != t.target and len(walk) < 10:
                    walk.append(r.choice(adj[walk[-1]])[0])
                if r.random() < 0.2:  # a hop over a node, maybe along no edge
                    walk = [walk[0], *walk[2:]] if len(walk) > 2 else walk
                length = sum(w.get((a, b), 10**9) for a, b in pairwise(walk))
                valid = walk[-1] == t.target and length == t.distance
                paid += _agree(family, t, " -> ".join(map(str, walk)), valid)
    assert paid


def test_sudoku_pays_exactly_the_completions_of_the_givens() -> None:
    r, paid = random.Random(4), 0
    for family in (sudoku.FAMILY, sudoku.V1):
        for t in _truths(family):
            size, b = t.size, 2 if t.size == 4 else 3
            for _ in range(CANDIDATES):
                grid = list(t.solution)
                if r.random() < 0.4:
                    grid[r.randrange(len(grid))] = str(r.randint(1, size))
                if r.random() < 0.3:  # two digits swapped everywhere: valid, givens changed
                    x, y = r.sample([str(d) for d in range(1, size + 1)], 2)
                    grid = [y if c == x else x if c == y else c for c in grid]
                rows = ["".join(grid[i : i + size]) for i in range(0, size * size, size)]
                cols = ["".join(row[i] for row in rows) for i in range(size)]
                boxes = [
                    "".join(rows[by + dy][bx + dx] for dy in range(b) for dx in range(b))
                    for by in range(0, size, b)
                    for bx in range(0, size, b)
                ]
                valid = all(len(set(u)) == size for u in rows + cols + boxes) and all(
                    g in (sudoku.BLANK, c) for g, c in zip(t.givens, grid, strict=True)
                )
                paid += _agree(family, t, "/".join(rows), valid)
    assert paid


def _reference_countdown(t: countdown.CountdownTruth, text: str) -> bool:
    """The rules read off a Python parse of an ASCII expression (never evaluated)."""
    seen: list[Fraction] = []
    used: list[int] = []

    def value(node: ast.expr) -> Fraction:
        if isinstance(node, ast.Constant):
            used.append(node.value)
            return Fraction(node.value)
        if isinstance(node, ast.UnaryOp):
            seen.append(-value(node.operand))
            return seen[-1]
        assert isinstance(node, ast.BinOp)
        a, b = value(node.left), value(node.right)
        op = type(node.op)
        seen.append(
            a + b
            if op is ast.Add
            else a - b
            if op is ast.Sub
            else a * b
            if op is ast.Mult
            else a / b
        )
        return seen[-1]

    try:
        total = value(ast.parse(text, mode="eval").body)
    except ZeroDivisionError:
        return False
    if Counter(used) - Counter(t.numbers) or (t.use_all and Counter(used) != Counter(t.numbers)):
        return False
    return total == t.target and not (t.negatives is False and any(v < 0 for v in seen))


def test_countdown_pays_exactly_the_expressions_the_rules_allow() -> None:
    r, paid = random.Random(5), 0
    for family in (countdown.FAMILY, countdown.V1):
        for t in _truths(family):
            for _ in range(CANDIDATES * 4):
                pool = [*t.numbers, r.randint(0, 12)]
                items = [str(n) for n in r.sample(pool, r.randint(1, min(5, len(pool))))]
                if r.random() < 0.2:
                    items.append(items[0])  # a number used twice
                while len(items) > 1:
                    a, b = items.pop(r.randrange(len(items))), items.pop(r.randrange(len(items)))
                    items.append(f"({a} {r.choice('+-*/')} {b})")
                text = f"-{items[0]}" if t.negatives and r.random() < 0.3 else items[0]
                paid += _agree(family, t, text, _reference_countdown(t, text))
            paid += _agree(family, t, family.oracle_answer(t), True)
    assert paid
