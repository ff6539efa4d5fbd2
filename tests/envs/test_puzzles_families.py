"""Per-family tests of the puzzles environment: determinism, oracles, validity checking."""

from __future__ import annotations

import builtins
import itertools
import time
from fractions import Fraction
from typing import Any

import pytest
from pydantic import BaseModel

from gymforge.envs.puzzles import FAMILIES
from gymforge.envs.puzzles.coloring import FAMILY as COLORING
from gymforge.envs.puzzles.countdown import FAMILY as COUNTDOWN
from gymforge.envs.puzzles.knights_knaves import FAMILY as KK
from gymforge.envs.puzzles.knights_knaves import count_solutions, holds
from gymforge.envs.puzzles.shortest_path import FAMILY as PATH
from gymforge.envs.puzzles.shortest_path import adjacency
from gymforge.envs.puzzles.sudoku import FAMILY as SUDOKU
from gymforge.envs.puzzles.sudoku import conflict

CELLS = [(f, d) for f in FAMILIES for d in sorted(f.levels)]
IDS = [f"{f.name.split('.')[1]}-d{d}" for f, d in CELLS]


def typed(family: Any, truth: dict[str, Any] | BaseModel) -> Any:
    """A truth dict written in a test, as the family's truth model."""
    return truth if isinstance(truth, BaseModel) else family.truth_model().model_validate(truth)


def reason(family: Any, truth: dict[str, Any], answer: str) -> str | None:
    outcome = family.check(typed(family, truth), answer)
    assert outcome.passed == (outcome.reason is None)
    return outcome.reason


# ---- every family --------------------------------------------------------------------------
@pytest.mark.parametrize(("family", "level"), CELLS, ids=IDS)
def test_same_id_same_task_and_nearby_seeds_differ(family: Any, level: int) -> None:
    for seed in (0, 1, 8812):
        a, b = family.task(level, seed), family.task(level, seed)
        assert a == b
        assert family.resolve(a.task_id) == a
    low = {family.task(level, s).prompt for s in range(1000, 1100)}
    high = {family.task(level, s).prompt for s in range(1050, 1150)}
    assert len(low) >= 99  # at most one collision in 100 tasks
    assert len(low & high) <= 51  # only the 50 shared seeds (+ at most one collision)


@pytest.mark.parametrize(("family", "level"), CELLS, ids=IDS)
def test_every_oracle_solution_verifies(family: Any, level: int) -> None:
    for seed in range(150):
        task = family.task(level, seed)
        outcome = family.check(family.truth_of(task), family.oracle_answer(family.truth_of(task)))
        assert outcome.passed, (task.task_id, outcome)


JUNK = [
    "__import__('os').system('exit 3')",
    "().__class__.__base__.__subclasses__()",
    "9**9**9**9",
    "(" * 5000 + "1" + ")" * 5000,
    "7" * 1_000_000,
    "\u0000\u202e\ud800",
    "",
]


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_checkers_never_call_eval_and_refuse_junk(family: Any, monkeypatch) -> None:
    def boom(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("model text reached eval/exec")

    monkeypatch.setattr(builtins, "eval", boom)
    monkeypatch.setattr(builtins, "exec", boom)
    truth = family.task(2, 3).truth
    for text in JUNK:
        assert not family.check(typed(family, truth), text).passed


@pytest.mark.perf
@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_checkers_refuse_junk_quickly(family: Any) -> None:
    truth = family.task(2, 3).truth
    for text in JUNK:
        t0 = time.perf_counter()
        family.check(typed(family, truth), text)
        assert time.perf_counter() - t0 < 0.5


# ---- countdown -----------------------------------------------------------------------------
CD = {"numbers": [1, 3, 4, 6], "target": 24, "solution": "6 / (1 - 3 / 4)"}


@pytest.mark.parametrize(
    "answer",
    [
        "6 / (1 - 3 / 4)",  # needs fractions along the way
        "6*4*1",
        "4 * 6",
        "6 * (3 + 1)",
        "(1 + 3) * 6",
        "6 \u00d7 4 \u00f7 1",  # multiplication and division signs
        "(6 \\times 4)",
        "$4*6$",
        "4 * 6 = 24",
        "((((4)))) * 6",
    ],
)
def test_countdown_accepts_any_valid_expression(answer: str) -> None:
    assert reason(COUNTDOWN, CD, answer) is None


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("24", "number_not_given"),
        ("6 * 4 * 1 + 0", "number_not_given"),
        ("6 * 6 - 3 * 4", "uses_number_twice"),
        ("6 * 4 + 3 - 3", "uses_number_twice"),
        ("6 + 4", "wrong_target"),
        ("6 / (3 - 3)", "division_by_zero"),
        ("4 * 6 = 25", "false_claim"),
        ("4 * 6 = 24 = 24", "parse_error"),
        ("64 - 40", "number_not_given"),
        ("-6 * -4", "parse_error"),
        ("6 ** 2", "parse_error"),
        ("6 * 4)", "parse_error"),
        ("(6 * 4", "parse_error"),
        ("6 4", "parse_error"),
        ("6 * x", "parse_error"),
        ("six times four", "parse_error"),
        ("1" + "+1" * 150, "too_long"),
        ("(" * 45 + "6" + ")" * 45 + "*4", "parse_error"),
    ],
)
def test_countdown_rejects_with_a_reason(answer: str, why: str) -> None:
    assert reason(COUNTDOWN, CD, answer) == why


def test_countdown_agrees_with_exact_arithmetic_on_every_pair() -> None:
    """Cross-check: for every pair of given numbers and operator, the checker accepts
    exactly the expressions whose Fraction value is the target."""
    for seed in range(40):
        task = COUNTDOWN.task(1 + seed % 3, seed)
        nums, target = task.truth["numbers"], task.truth["target"]
        for i, j in itertools.permutations(range(len(nums)), 2):
            a, b = Fraction(nums[i]), Fraction(nums[j])
            for op, value in (("+", a + b), ("-", a - b), ("*", a * b), ("/", a / b)):
                got = reason(COUNTDOWN, task.truth, f"{nums[i]} {op} {nums[j]}")
                assert got == (None if value == target else "wrong_target")


def test_countdown_targets_are_not_given_numbers() -> None:
    for level in (1, 2, 3):
        for seed in range(200):
            truth = COUNTDOWN.task(level, seed).truth
            assert truth["target"] not in truth["numbers"]
            assert 0 < truth["target"] <= 999


# ---- sudoku --------------------------------------------------------------------------------
def test_sudoku_generated_grids_are_valid() -> None:
    for level in (1, 2, 3):
        for seed in range(100):
            t = SUDOKU.task(level, seed).truth
            n = t["size"]
            rows = [t["solution"][i : i + n] for i in range(0, n * n, n)]
            assert conflict(rows, n) is None
            assert sum(c != "." for c in t["givens"]) == SUDOKU.task(level, seed).params["givens"]


def test_sudoku_accepts_another_valid_completion() -> None:
    solution = "1234341221434321"
    givens = "".join("." if c in "12" else c for c in solution)
    truth = {"size": 4, "givens": givens, "solution": solution}
    swapped = solution.translate(str.maketrans("12", "21"))
    assert swapped != solution
    for grid in (solution, swapped):
        answer = "/".join(grid[i : i + 4] for i in range(0, 16, 4))
        assert reason(SUDOKU, truth, answer) is None
    assert reason(SUDOKU, truth, "1 2 3 4 / 3,4,1,2 / 2143 / 4321.") is None


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("2134/3412/1243/4321", "givens_changed"),
        ("1234/3412/2143/4322", "duplicate_in_row"),
        ("1234/3412/2143/4312", "duplicate_in_column"),
        ("1234/2143/3412/4321", "duplicate_in_box"),
        ("1234/3412/2.43/4321", "incomplete"),
        ("1234/3412/2143/432.", "incomplete"),
        ("1234/3412/2143", "parse_error"),
        ("1234/3412/2143/43210", "parse_error"),
        ("1234/3412/2143/432x", "parse_error"),
        ("1234/3412/2143/4325", "parse_error"),
    ],
)
def test_sudoku_rejects_with_a_reason(answer: str, why: str) -> None:
    truth = {"size": 4, "givens": "1...............", "solution": "1234341221434321"}
    assert reason(SUDOKU, truth, answer) == why


# ---- knights and knaves --------------------------------------------------------------------
def brute_force(statements: list[Any]) -> list[tuple[bool, ...]]:
    n = len(statements)
    return [
        k
        for k in itertools.product((False, True), repeat=n)
        if all(holds(s, k) == k[i] for i, s in enumerate(statements))
    ]


def test_kk_bitset_count_matches_brute_force() -> None:
    for level in (1, 2, 3):
        for seed in range(60):
            t = KK.task(level, seed).truth
            sols = brute_force(t["statements"])
            assert tuple(t["solution"]) in sols
            assert len(sols) == t["solutions"] == count_solutions(t["statements"])


def test_kk_accepts_every_consistent_assignment() -> None:
    truth = {
        "names": ["Ana", "Ben"],
        "statements": [["is", 1, "knight"], ["is", 0, "knight"]],
        "solution": [True, True],
    }
    assert brute_force(truth["statements"]) == [(False, False), (True, True)]
    assert reason(KK, truth, "Ana=knight, Ben=knight") is None
    assert reason(KK, truth, "Ben=knave; ana: knave.") is None
    assert reason(KK, truth, "Ana is a knave, Ben is a knave") is None
    assert reason(KK, truth, "Ana=knight, Ben=knave") == "violates_clue"


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("Ana=knight, Ana=knave, Ben=knave", "conflicting_labels"),
        ("Ana=knight, Ana=knight, Ben=knight", "duplicate_name"),
        ("Ana=knight", "missing_person"),
        ("Ana=knight, Bob=knight", "unknown_name"),
        ("Ana=knight or knave, Ben=knight", "parse_error"),
        ("Ana=knight/knave, Ben=knight", "parse_error"),
        ("all knights", "parse_error"),
    ],
)
def test_kk_rejects_with_a_reason(answer: str, why: str) -> None:
    truth = {"names": ["Ana", "Ben"], "statements": [["same", 0, 1]] * 2, "solution": [1, 1]}
    assert reason(KK, truth, answer) == why


# ---- shortest path -------------------------------------------------------------------------
SP = {
    "nodes": ["A", "B", "C", "D"],
    "edges": [["A", "B", 1], ["A", "C", 1], ["B", "D", 1], ["C", "D", 1], ["B", "C", 5]],
    "source": "A",
    "target": "D",
    "distance": 2,
    "path": ["A", "B", "D"],
}


@pytest.mark.parametrize("answer", ["A -> B -> D", "A -> C -> D", "A → C → D", "a, c, d"])
def test_path_accepts_any_shortest_path(answer: str) -> None:
    assert reason(PATH, SP, answer) is None


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("A -> D", "not_a_path"),
        ("A -> B -> C -> D", "not_shortest"),
        ("A -> B -> A -> B -> D", "not_shortest"),
        ("B -> D", "wrong_start"),
        ("A -> B", "wrong_end"),
        ("A", "wrong_end"),
        ("A -> E -> D", "unknown_node"),
        ("A -> -> D", "parse_error"),
    ],
)
def test_path_rejects_with_a_reason(answer: str, why: str) -> None:
    assert reason(PATH, SP, answer) == why


def test_path_accepts_exactly_the_minimum_simple_paths() -> None:
    """Cross-check on generated graphs: enumerate every simple path; the checker accepts a
    path iff its weight is the minimum over all of them."""
    for seed in range(25):
        t = PATH.task(1, seed).truth
        adj = adjacency(t["nodes"], t["edges"])
        paths: list[tuple[list[str], int]] = []
        stack: list[tuple[list[str], int]] = [([t["source"]], 0)]
        while stack:
            path, length = stack.pop()
            if path[-1] == t["target"]:
                paths.append((path, length))
                continue
            stack += [([*path, v], length + w) for v, w in adj[path[-1]] if v not in path]
        best = min(length for _, length in paths)
        assert best == t["distance"]
        for path, length in paths:
            got = reason(PATH, t, " -> ".join(map(str, path)))
            assert got == (None if length == best else "not_shortest")


# ---- colouring -----------------------------------------------------------------------------
def test_coloring_accepts_exactly_the_proper_colourings() -> None:
    for seed in range(6):
        t = COLORING.task(1, seed).truth
        nodes, k = t["nodes"], t["colors"]
        accepted = 0
        for colors in itertools.product(range(1, k + 1), repeat=len(nodes)):
            c = dict(zip(nodes, colors, strict=True))
            proper = all(c[u] != c[v] for u, v in t["edges"])
            answer = ", ".join(f"{v}={c[v]}" for v in nodes)
            assert (reason(COLORING, t, answer) is None) == proper
            accepted += proper
        assert accepted >= 6  # at least the planted colouring under the 3! relabellings


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("A=1, B=1, C=2", "conflict"),
        ("A=1, B=2, C=4", "bad_color"),
        ("A=1, B=2, C=0", "bad_color"),
        ("A=1, B=2", "missing_node"),
        ("A=1, A=2, B=2, C=3", "duplicate_node"),
        ("A=1, B=2, Z=3", "unknown_node"),
        ("A=red, B=2, C=3", "parse_error"),
        ("A=1 or 2, B=2, C=3", "parse_error"),
    ],
)
def test_coloring_rejects_with_a_reason(answer: str, why: str) -> None:
    truth = {"nodes": ["A", "B", "C"], "edges": [["A", "B"], ["B", "C"]], "colors": 3}
    assert reason(COLORING, truth, answer) == why
