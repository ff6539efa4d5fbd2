"""gymforge's own strict verifiers for reasoning-gym datasets whose puzzle gymforge knows.

reasoning-gym's countdown and puzzle24 scorers ``parse_expr`` the answer, count the integers
in its text, and compare the value with the target. That pays answers which solve nothing:
``(n1+n2+...)*(log(E)-log(E)) + <the target built from log(E)>`` uses every number and equals
the target, and puzzle24 accepts the constant ``6+6+6+6`` on any task whose numbers range
reaches 6. For these datasets the adapter judges with gymforge's countdown checker instead
(``gymforge.verify.puzzles.countdown``): a bounded hand-written parser (integers, ``+ - * /``,
parentheses, unary minus; nothing is evaluated), every given number used exactly once
(reasoning-gym's rule) and nothing else, exact rational arithmetic, the value equal to the
target. knights_knaves, sudoku and mini_sudoku are judged by gymforge's validity checkers of
the same puzzles, fed from the entry's metadata through the puzzles' dataset-row readers
(which take reasoning-gym's statement grammar): any valid solution passes, nothing else.
sokoban is judged by ``sokoban.py``: legal moves only, all boxes on goals exactly after the
last move (reasoning-gym's scorer skips bumps and paid a random walk on 40% of tasks).

``STRICT`` maps a dataset to its checker and the function that turns its entry into the
checker's truth; ``strict_check`` is None for any other dataset (the sandboxed scorer judges
those). reasoning-gym's ``shortest_path`` is a path on a grid and ``graph_color`` stores no
answer, so gymforge's graph families do not apply to them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from gymforge.envs.reasoning_gym import sokoban
from gymforge.verify.puzzles import countdown, knights_knaves, sudoku
from gymforge.verify.puzzles.answer import MAX_ANSWER_CHARS, Outcome

PUZZLE24_TARGET = 24


def _countdown_truth(entry: Mapping[str, Any]) -> countdown.CountdownTruth:
    meta = entry["metadata"]
    return countdown.CountdownTruth(
        numbers=sorted(int(n) for n in meta["numbers"]),
        target=int(meta["target"]),
        negatives=True,  # reasoning-gym's own answers use unary minus and negative values
        use_all=True,
    )


def _puzzle24_truth(entry: Mapping[str, Any]) -> countdown.CountdownTruth:
    meta = entry["metadata"]
    return countdown.CountdownTruth(
        numbers=sorted(int(n) for n in meta["numbers"]),
        target=PUZZLE24_TARGET,
        negatives=True,
        use_all=True,
    )


def _knights_row(entry: Mapping[str, Any]) -> dict[str, Any]:
    meta = entry["metadata"]
    terms = meta.get("knight_knave_terms") or {}
    return {
        "names": [str(n) for n in meta["names"]],
        "statements": _lists(meta["statements"]),
        "labels": {
            "knight": str(terms.get("knight", "knight")),
            "knave": str(terms.get("knave", "knave")),
        },
    }


def _sudoku_row(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {"puzzle": _lists(entry["metadata"]["puzzle"])}


def _lists(value: Any) -> Any:
    """reasoning-gym's tuples as lists (gymforge's row readers take JSON shapes)."""
    if isinstance(value, list | tuple):
        return [_lists(v) for v in value]
    return value


class Checker(Protocol):
    """What judges: a puzzle family's ``check(truth, answer)``."""

    def check(self, truth: Any, answer: str) -> Outcome: ...


class _EntryChecker:
    """A checker that reads the reasoning-gym entry itself (its truth is the entry)."""

    def __init__(self, check: Callable[[Mapping[str, Any], str], Outcome]) -> None:
        self._check = check

    def check(self, truth: Any, answer: str) -> Outcome:
        return self._check(truth, answer)


Strict = tuple[Checker, Callable[[Mapping[str, Any]], Any]]

STRICT: dict[str, Strict] = {
    "countdown": (countdown.FAMILY, _countdown_truth),
    "puzzle24": (countdown.FAMILY, _puzzle24_truth),
    "knights_knaves": (
        knights_knaves.FAMILY,
        lambda e: knights_knaves.FAMILY.from_row(_knights_row(e)),
    ),
    "sudoku": (sudoku.FAMILY, lambda e: sudoku.FAMILY.from_row(_sudoku_row(e))),
    "mini_sudoku": (sudoku.FAMILY, lambda e: sudoku.FAMILY.from_row(_sudoku_row(e))),
    "sokoban": (_EntryChecker(sokoban.check), lambda e: e),
}
"""Datasets judged by one of gymforge's puzzle checkers (module doc): the checking family,
and the function that turns a reasoning-gym entry into that family's truth."""

VERIFIER_NAMES = {
    "countdown": "gymforge.countdown",
    "puzzle24": "gymforge.countdown",
    "knights_knaves": "gymforge.knights_knaves",
    "sudoku": "gymforge.sudoku",
    "mini_sudoku": "gymforge.sudoku",
    "sokoban": "gymforge.sokoban",
}


def strict_check(dataset: str, entry: Mapping[str, Any], answer: str) -> Outcome | None:
    """The strict verifier's outcome on ``answer``, or None when ``dataset`` has none."""
    found = STRICT.get(dataset)
    if found is None:
        return None
    if len(answer) > MAX_ANSWER_CHARS:  # the puzzle checkers' own input bound
        return Outcome(False, "too_long", {"chars": len(answer), "limit": MAX_ANSWER_CHARS})
    family, truth_of = found
    outcome = family.check(truth_of(entry), answer)
    facts = {**outcome.facts, "verifier": VERIFIER_NAMES[dataset]}
    return Outcome(outcome.passed, outcome.reason, facts)
