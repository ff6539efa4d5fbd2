"""Puzzle-specific red-team cases: near-miss answers built from the oracle's solution.

Each case targets one family (on a task of another family it is not applicable) and turns
the task's hidden truth and the oracle's reply into an answer that must be rejected: a
number used twice, a grid whose givens were changed, a labelling that breaks a clue, a
path that is not the shortest... A craft returns None when the near miss cannot be built
for this particular task (or would accidentally be a valid solution), which marks the
episode not applicable instead of counting it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from gymforge.core.types import Task
from gymforge.envs.puzzles import coloring, shortest_path
from gymforge.envs.puzzles.coloring import ColoringTruth
from gymforge.envs.puzzles.shortest_path import PathTruth
from gymforge.kit.redteam import CraftedReply
from gymforge.qa_profile import RedTeamCase
from gymforge.verify.puzzles import countdown, knights_knaves, sudoku
from gymforge.verify.puzzles.base import PuzzleFamily, PuzzleTruth
from gymforge.verify.puzzles.countdown import CountdownTruth
from gymforge.verify.puzzles.kk_logic import holds
from gymforge.verify.puzzles.knights_knaves import KnightsTruth
from gymforge.verify.puzzles.rows import Name
from gymforge.verify.puzzles.sudoku import SudokuTruth

T = TypeVar("T", bound=PuzzleTruth)


class PuzzleAttack(CraftedReply, Generic[T]):
    """Follows the oracle; replaces its reply by ``Answer: <craft(truth)>`` on tasks of
    ``family``."""

    def __init__(self, family: PuzzleFamily[T], craft: Callable[[T], str | None]) -> None:
        def reply(task: Task) -> str | None:
            answer = craft(family.truth_of(task)) if task.family == family.name else None
            return None if answer is None else f"Answer: {answer}"

        super().__init__(from_task=reply)


# ---- countdown -----------------------------------------------------------------------------
def _number_twice(t: CountdownTruth) -> str:
    n = countdown.leaves(countdown.parse_expression(str(t.solution)))[0]
    return f"({t.solution}) + {n} - {n}"


def _target_literal(t: CountdownTruth) -> str | None:
    return None if t.target in t.numbers else str(t.target)


def _div_zero(t: CountdownTruth) -> str:
    n = t.numbers[0]
    return f"({t.solution}) + {n} / ({n} - {n})"


def _unary_where_forbidden(t: CountdownTruth) -> str | None:
    if t.negatives is None or t.negatives:
        return None  # version 1 or a task that allows it: not an attack there
    return f"-(-({t.solution}))"


# ---- sudoku --------------------------------------------------------------------------------
def _grid(t: SudokuTruth, flat: str) -> str:
    size = t.size
    return "/".join(flat[i : i + size] for i in range(0, size * size, size))


def _givens_swapped(t: SudokuTruth) -> str | None:
    given = sorted({c for c in t.givens if c != "."})
    if not given:
        return None
    a = given[0]
    b = "2" if a == "1" else "1"
    swap: dict[str, str | int | None] = {a: b, b: a}
    swapped = (t.solution or "").translate(str.maketrans(swap))
    return _grid(t, swapped)


def _duplicate(t: SudokuTruth) -> str | None:
    s, size = t.solution or "", t.size
    blank = t.givens.find(".")
    if blank < 0:
        return None
    other = s[blank - 1] if blank % size else s[blank + 1]
    return _grid(t, s[:blank] + other + s[blank + 1 :])


def _echo_puzzle(t: SudokuTruth) -> str:
    return _grid(t, t.givens)


def _two_grids(t: SudokuTruth) -> str | None:
    """The right grid and a wrong one, both on the lines after ``Answer:``."""
    swapped = _givens_swapped(t)
    if swapped is None:
        return None
    return "\n" + "\n".join([_grid(t, t.solution or ""), swapped]).replace("/", "\n")


# ---- knights and knaves --------------------------------------------------------------------
def _labelling(t: KnightsTruth, knights: list[bool]) -> str | None:
    bad = any(holds(s, knights) != knights[i] for i, s in enumerate(t.statements))
    if not bad:
        return None  # that labelling is consistent: a valid answer, not an attack
    return ", ".join(
        f"{n}={knights_knaves.label(k)}" for n, k in zip(t.names, knights, strict=True)
    )


def _all_knights(t: KnightsTruth) -> str | None:
    return _labelling(t, [True] * len(t.names))


def _flip_one(t: KnightsTruth) -> str | None:
    solution = t.solution or []
    return _labelling(t, [not solution[0], *solution[1:]]) if solution else None


def _either_label(t: KnightsTruth) -> str:
    return ", ".join(f"{n}=knight or knave" for n in t.names)


def _both_labels(t: KnightsTruth) -> str:
    first = t.names[0]
    pairs = zip(t.names, t.solution or [], strict=True)
    rest = ", ".join(f"{n}={knights_knaves.label(k)}" for n, k in pairs)
    return f"{first}=knight, {first}=knave, {rest}"


# ---- graphs --------------------------------------------------------------------------------
def _longer_path(t: PathTruth, budget: int = 5_000) -> str | None:
    """A simple path from source to target that is longer than the shortest (DFS, bounded)."""
    adj = shortest_path.adjacency(t.nodes, t.edges)
    stack: list[tuple[Name, list[Name], int]] = [(t.source, [t.source], 0)]
    while stack and budget:
        budget -= 1
        node, path, length = stack.pop()
        if node == t.target:
            if length > t.distance:
                return " -> ".join(map(str, path))
            continue
        stack += [(v, [*path, v], length + w) for v, w in adj[node] if v not in path]
    return None


def _skip_node(t: PathTruth) -> str | None:
    path = t.path or []
    if len(path) < 3 or (path[0], path[2]) in shortest_path.weights(t.edges):
        return None
    return " -> ".join(map(str, [path[0], *path[2:]]))


def _stop_short(t: PathTruth) -> str:
    return " -> ".join(map(str, (t.path or [])[:-1]))


def _colors(t: ColoringTruth, colors: list[int]) -> str:
    return ", ".join(f"{v}={c}" for v, c in zip(t.nodes, colors, strict=True))


def _one_color(t: ColoringTruth) -> str | None:
    return _colors(t, [1] * len(t.nodes)) if t.edges else None


def _extra_color(t: ColoringTruth) -> str:
    return _colors(t, [t.colors + 1, *(t.solution or [])[1:]])


def _conflict(t: ColoringTruth) -> str | None:
    if not t.edges:
        return None
    u, v = t.edges[0]
    colors = list(t.solution or [])
    colors[t.nodes.index(v)] = colors[t.nodes.index(u)]
    return _colors(t, colors)


def _case(
    family: PuzzleFamily[T], name: str, craft: Callable[[T], str | None], description: str
) -> RedTeamCase:
    return RedTeamCase(name, lambda: PuzzleAttack(family, craft), description)


CASES: tuple[RedTeamCase, ...] = (
    _case(countdown.FAMILY, "countdown_number_twice", _number_twice, "E + n - n"),
    _case(countdown.FAMILY, "countdown_target_literal", _target_literal, "the target itself"),
    _case(
        countdown.FAMILY, "countdown_import_injection", lambda t: "__import__('os').getcwd()", ""
    ),
    _case(countdown.FAMILY, "countdown_division_by_zero", _div_zero, "E + n / (n - n)"),
    _case(countdown.FAMILY, "countdown_unary_minus_forbidden", _unary_where_forbidden, "-(-(E))"),
    _case(sudoku.FAMILY, "sudoku_givens_changed", _givens_swapped, "valid grid, digits swapped"),
    _case(sudoku.FAMILY, "sudoku_duplicate", _duplicate, "one filled cell repeats a neighbour"),
    _case(sudoku.FAMILY, "sudoku_echo_puzzle", _echo_puzzle, "the puzzle with its blanks"),
    _case(sudoku.FAMILY, "sudoku_two_grids", _two_grids, "the right and a wrong grid on lines"),
    _case(knights_knaves.FAMILY, "kk_all_knights", _all_knights, "everyone a knight"),
    _case(knights_knaves.FAMILY, "kk_both_labels", _both_labels, "one islander labelled twice"),
    _case(knights_knaves.FAMILY, "kk_flip_one", _flip_one, "the oracle with one label flipped"),
    _case(knights_knaves.FAMILY, "kk_either_label", _either_label, "everyone 'knight or knave'"),
    _case(shortest_path.FAMILY, "path_not_shortest", _longer_path, "a longer simple path"),
    _case(shortest_path.FAMILY, "path_skips_edge", _skip_node, "a hop over a missing edge"),
    _case(shortest_path.FAMILY, "path_stops_short", _stop_short, "ends before the target"),
    _case(coloring.FAMILY, "coloring_one_color", _one_color, "every node colour 1"),
    _case(coloring.FAMILY, "coloring_extra_color", _extra_color, "colour k+1"),
    _case(coloring.FAMILY, "coloring_conflict", _conflict, "an edge with equal colours"),
)
