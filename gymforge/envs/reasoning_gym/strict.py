"""gymforge's own strict verifiers for reasoning-gym datasets whose puzzle gymforge knows.

reasoning-gym's countdown and puzzle24 scorers ``parse_expr`` the answer, count the integers
in its text, and compare the value with the target. That pays answers which solve nothing:
``(n1+n2+...)*(log(E)-log(E)) + <the target built from log(E)>`` uses every number and equals
the target, and puzzle24 accepts the constant ``6+6+6+6`` on any task whose numbers range
reaches 6. For these datasets the adapter judges with gymforge's countdown checker instead
(``gymforge.envs.puzzles.countdown``): a bounded hand-written parser (integers, ``+ - * /``,
parentheses; nothing is evaluated), every given number used exactly once (reasoning-gym's
rule) and nothing else, exact rational arithmetic, the value equal to the target.

``STRICT`` maps a dataset to the function that turns its entry into the checker's truth;
``strict_check`` is None for any other dataset (the sandboxed scorer judges those).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from gymforge.envs.puzzles import countdown
from gymforge.envs.puzzles.answer import Outcome

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


STRICT: dict[str, Callable[[Mapping[str, Any]], countdown.CountdownTruth]] = {
    "countdown": _countdown_truth,
    "puzzle24": _puzzle24_truth,
}
"""Datasets judged by gymforge's strict checker (module doc)."""


def strict_check(dataset: str, entry: Mapping[str, Any], answer: str) -> Outcome | None:
    """The strict verifier's outcome on ``answer``, or None when ``dataset`` has none."""
    truth_of = STRICT.get(dataset)
    if truth_of is None:
        return None
    outcome = countdown.FAMILY.check(truth_of(entry), answer)
    facts = {**outcome.facts, "verifier": "gymforge.countdown"}
    return Outcome(outcome.passed, outcome.reason, facts)
