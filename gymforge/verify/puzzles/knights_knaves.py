"""Knights and knaves: knights always tell the truth, knaves always lie; who is which?

Statements are small logic terms (JSON lists) about the islanders:
``["is", i, "knight"|"knave"]``, ``["same", i, j]``, ``["diff", i, j]``,
``["atleast", k]`` / ``["atmost", k]`` (knights among all islanders), and one level of
``["and", a, b]`` / ``["or", a, b]`` (inclusive) over those. Version 2 adds ``["not", a]``,
``["implies", a, b]``, ``["iff", a, b]``, ``and``/``or`` over any number of terms, and
nesting (generator kind ``logic``: formulas two levels deep, rendered with brackets); its
checker also reads answers such as ``Ann is a knight, and Bob is a knave.``.

Dataset rows (``from_row``): ``names``; ``statements``, one term per name, in this grammar or
in reasoning-gym's (``["telling-truth", i]``, ``["lying", i]``, ``not``, ``and``, ``or``,
``->``, ``<=>``); optional ``labels``, the words for knight and knave (``["hero",
"villain"]`` or ``{"knight": "hero", "knave": "villain"}``).

Generation draws a hidden assignment, then gives every islander a random statement whose
truth matches their kind (negating it when it does not), so the hidden assignment is always
consistent and is the oracle. Uniqueness is *preferred*, not required: a local search
redraws one statement at a time (never increasing the number of consistent assignments,
counted by brute force over all 2^N assignments as bitsets) for up to ``UNIQUE_TRIES``
rounds. The verifier evaluates the statements under the proposed assignment and accepts
*any* consistent one, so a task that kept two solutions would still be fair. Measured rate
of exactly one solution over 5,000 tasks per level (seeds 0..4999): 100% at every level;
``benchmarks/task_generation_puzzles.py`` re-measures it on every run.

Failure reasons: ``parse_error``, ``unknown_name``, ``duplicate_name``,
``conflicting_labels``, ``missing_person``, ``violates_clue``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace
from gymforge.verify.puzzles.answer import Outcome, answer_instruction, fail, ok
from gymforge.verify.puzzles.base import PuzzleFamily, PuzzleTruth
from gymforge.verify.puzzles.kk_logic import (
    ATOMS,
    MAX_TERM_NODES,
    Stmt,
    count_solutions,
    holds,
    negate,
    term,
)
from gymforge.verify.puzzles.rows import field

NAMES = [
    "Alice",
    "Bob",
    "Carol",
    "Dave",
    "Erin",
    "Frank",
    "Grace",
    "Heidi",
    "Ivan",
    "Judy",
    "Kevin",
    "Laura",
    "Mallory",
    "Nick",
    "Olivia",
    "Peggy",
    "Quentin",
    "Rita",
    "Sam",
    "Trent",
    "Uma",
    "Victor",
    "Wendy",
    "Xavier",
    "Yara",
    "Zoe",
]
UNIQUE_TRIES = 40
_ITEM = re.compile(r"\s*([A-Za-z]+)\s*(?:=|:|\s+is\s+an?\s+)\s*(knight|knave)\s*", re.I)
_ITEM_V2 = re.compile(r"\s*([A-Za-z][\w'-]*)\s*(?:=|:|\s+is\s+(?:an?\s+)?)\s*([A-Za-z]+)\s*", re.I)
_AND = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+", re.I)
_NAME = re.compile(r"[A-Za-z][\w'-]{0,40}")


# ---- generation and rendering -------------------------------------------------------------
def _atom(r: random.Random, speaker: int, n: int) -> Stmt:
    kind = r.choice(("is", "is", "same", "diff", "count"))
    if kind == "is":
        other = r.choice([i for i in range(n) if i != speaker])
        return ["is", other, r.choice(("knight", "knave"))]
    if kind != "count":
        return [kind, *sorted(r.sample(range(n), 2))]
    if r.random() < 0.5:
        return ["atleast", r.randint(1, n)]
    return ["atmost", r.randint(0, n - 1)]


def _formula(r: random.Random, speaker: int, n: int, depth: int) -> Stmt:
    """A random term with connectives nested up to ``depth`` levels (kind ``logic``)."""
    if depth == 0 or (depth == 1 and r.random() < 0.3):
        return _atom(r, speaker, n)
    op = r.choice(("and", "or", "not", "implies", "iff", "implies", "iff"))
    if op == "not":
        return ["not", _formula(r, speaker, n, depth - 1)]
    width = r.choice((2, 2, 3)) if op in ("and", "or") else 2
    return [
        op,
        *(_formula(r, speaker, n, depth - 1 if r.random() < 0.5 else 0) for _ in range(width)),
    ]


def _statement(
    r: random.Random, speaker: int, knights: list[bool], compound: bool, logic: bool = False
) -> Stmt:
    n = len(knights)
    if logic:
        s = _formula(r, speaker, n, 2)
        return s if holds(s, knights) == knights[speaker] else ["not", s]
    s = _atom(r, speaker, n)
    if compound and r.random() < 0.6:
        other = _atom(r, speaker, n)
        while other == s:
            other = _atom(r, speaker, n)
        s = [r.choice(("and", "or")), s, other]
    return s if holds(s, knights) == knights[speaker] else negate(s)


def _clause(s: Stmt, names: Sequence[str], speaker: int, n: int) -> str:
    op = s[0]
    if op == "is":
        return f"{names[s[1]]} is a {s[2]}"
    if op in ("same", "diff"):
        kind = "of the same kind" if op == "same" else "of different kinds"
        if speaker in s[1:]:
            return f"{names[s[2] if s[1] == speaker else s[1]]} and I are {kind}"
        return f"{names[s[1]]} and {names[s[2]]} are {kind}"
    if op == "atleast":
        k = s[1]
        if k == 1:
            return "at least one of us is a knight"
        return "all of us are knights" if k == n else f"at least {k} of us are knights"
    if op == "atmost":
        k = s[1]
        if k == 1:
            return "at most one of us is a knight"
        return "none of us are knights" if k == 0 else f"at most {k} of us are knights"
    if op in ("and", "or") and len(s) == 3 and all(x[0] in ATOMS for x in s[1:]):
        a, b = _clause(s[1], names, speaker, n), _clause(s[2], names, speaker, n)
        return f"{a}, and {b}" if op == "and" else f"{a}, or {b} (or both)"  # version 1 wording
    parts = [_part(x, names, speaker, n) for x in s[1:]]
    if op == "not":
        return f"it is not true that {parts[0]}"
    if op == "implies":
        return f"if {parts[0]}, then {parts[1]}"
    if op == "iff":
        return f"{parts[0]} if and only if {parts[1]}"
    if op == "and":
        return ", and ".join(parts)
    return ", or ".join(parts) + " (or several of these)"


def _part(s: Stmt, names: Sequence[str], speaker: int, n: int) -> str:
    """A sub-clause, bracketed unless it is an atom."""
    text = _clause(s, names, speaker, n)
    return text if s[0] in ATOMS else f"({text})"


def _sentence(s: Stmt, names: Sequence[str], speaker: int) -> str:
    clause = _clause(s, names, speaker, len(names))
    return f'- {names[speaker]} says: "{clause[:1].upper()}{clause[1:]}."'


def label(knight: bool) -> str:
    return "knight" if knight else "knave"


class KnightsTruth(PuzzleTruth):
    """``statements``: one term per islander (see ``kk_logic``); ``solution`` (knight or
    not, per islander) and ``solutions`` (how many assignments fit) for generated tasks;
    ``labels``: a dataset row's own words for knight and knave."""

    names: list[str]
    statements: list[Any]
    solution: list[bool] | None = None
    solutions: int | None = None
    labels: list[str] | None = None


class KnightsKnavesFamily(PuzzleFamily[KnightsTruth]):
    heldout = {"eight_islanders": lambda p: p["people"] == 8}

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, KnightsTruth]:
        n, compound = params["people"], params["kinds"] == "compound"
        logic = params["kinds"] == "logic"
        names = r.sample(NAMES, n)
        knights = [r.random() < 0.5 for _ in range(n)]
        statements = [_statement(r, i, knights, compound, logic) for i in range(n)]
        solutions = count_solutions(statements)
        for _ in range(UNIQUE_TRIES):
            if solutions == 1:
                break
            i = r.randrange(n)
            old, statements[i] = statements[i], _statement(r, i, knights, compound, logic)
            fewer = count_solutions(statements)
            if fewer <= solutions:
                solutions = fewer
            else:
                statements[i] = old
        said = "\n".join(_sentence(s, names, i) for i, s in enumerate(statements))
        prompt = (
            "On an island, knights always tell the truth and knaves always lie. You meet "
            f'{n} islanders: {", ".join(names)}. "Us" always means all {n} of them.\n'
            f"{said}\n\nWho is a knight and who is a knave? If several assignments fit, any "
            "assignment consistent with every statement is accepted. Name every islander "
            "exactly once.\n\n"
            + answer_instruction("<Name>=<knight|knave>, ...", "Xena=knight, Yuri=knave")
        )
        truth = KnightsTruth(
            names=names, statements=statements, solution=knights, solutions=solutions
        )
        return prompt, truth

    def answer_form(self, truth: KnightsTruth) -> tuple[str, str]:
        yes, no = truth.labels or ["knight", "knave"]
        return f"<Name>=<{yes}|{no}>, ...", f"Xena={yes}, Yuri={no}"

    def from_row(self, row: Mapping[str, Any]) -> KnightsTruth:
        people = field(row, "names", list)
        if not people or not all(isinstance(p, str) and _NAME.fullmatch(p) for p in people):
            raise ValueError("field 'names' must be a non-empty list of one-word names")
        if len({p.lower() for p in people}) != len(people):
            raise ValueError("field 'names' names someone twice")
        said = field(row, "statements", list)
        if len(said) != len(people):
            raise ValueError(f"field 'statements' needs one term per name ({len(people)})")
        budget = [MAX_TERM_NODES]
        statements = [term(s, len(people), budget) for s in said]
        truth = KnightsTruth(names=people, statements=statements)
        labels = row.get("labels")
        if labels is not None:
            if isinstance(labels, dict):
                labels = [labels.get("knight"), labels.get("knave")]
            if not (
                isinstance(labels, list)
                and len(labels) == 2
                and all(isinstance(w, str) and w.isalpha() for w in labels)
                and labels[0].lower() != labels[1].lower()
                # the usual words are read too: neither may name the other kind
                and labels[0].lower() != "knave"
                and labels[1].lower() != "knight"
            ):
                raise ValueError(
                    "field 'labels' must give two different words: knight, knave (neither the "
                    "usual word for the other kind)"
                )
            truth = truth.model_copy(update={"labels": [w.lower() for w in labels]})
        return truth

    def check(self, truth: KnightsTruth, answer: str) -> Outcome:
        names = truth.names
        index = {name.lower(): i for i, name in enumerate(names)}
        words = {"knight": True, "knave": False}
        if self.version >= 2 and truth.labels is not None:
            words.update({truth.labels[0]: True, truth.labels[1]: False})
        pattern = _ITEM if self.version < 2 else _ITEM_V2
        # each run of blanks one space: the item patterns read blanks only as \s* or \s+, so
        # they accept what they accepted, in linear time (on runs of blanks they backtracked
        # cubically: 20 s for one answer line, test_puzzles_answer_backtracking)
        text = " ".join(answer.split()).rstrip(".").replace(";", ",")
        items = text.split(",") if self.version < 2 else _AND.split(text)
        given: dict[int, bool] = {}
        for item in items:
            m = pattern.fullmatch(item)
            if m is None or m[2].lower() not in words:
                return fail("parse_error", item=item.strip()[:40])
            who, kind = index.get(m[1].lower()), words[m[2].lower()]
            if who is None:
                return fail("unknown_name", name=m[1][:40])
            if who in given:
                return fail(
                    "duplicate_name" if given[who] == kind else "conflicting_labels",
                    name=names[who],
                )
            given[who] = kind
        missing = [names[i] for i in range(len(names)) if i not in given]
        if missing:
            return fail("missing_person", name=missing[0])
        knights = [given[i] for i in range(len(names))]
        for i, s in enumerate(truth.statements):
            if holds(s, knights) != knights[i]:
                return fail("violates_clue", speaker=names[i], labelled=label(knights[i]))
        return ok(knights=sum(knights))

    def oracle_answer(self, truth: KnightsTruth) -> str:
        pairs = zip(truth.names, truth.solution or [], strict=True)
        return ", ".join(f"{name}={label(k)}" for name, k in pairs)


def _level(people: tuple[int, int], kinds: tuple[str, ...]) -> ParamSpace:
    return ParamSpace({"people": IntKnob(*people), "kinds": ChoiceKnob(kinds)})


LEVELS_V1 = {
    1: _level((2, 4), ("basic",)),
    2: _level((5, 6), ("basic", "compound")),
    3: _level((7, 8), ("compound",)),
}
V1 = KnightsKnavesFamily("puzzles.knights_knaves", 1, LEVELS_V1)
FAMILY = KnightsKnavesFamily(
    "puzzles.knights_knaves",
    2,
    {
        1: _level((2, 4), ("basic",)),
        2: _level((5, 6), ("basic", "compound", "logic")),
        3: _level((7, 8), ("compound", "logic")),
    },
    older={1: V1},
)
"""Version 2: not, implies, iff, n-ary and/or and nesting; dataset rows; answers with
"and" and a row's own words for knight and knave."""
