"""Countdown: reach the target from the given numbers with + - * / and parentheses.

Knobs: ``count`` numbers offered, ``big`` of them drawn from 25/50/75/100 and the rest
from ``1..small_max`` (each small value at most twice), the ``ops`` the generator may
use (the agent may always use all four), and (version 2) ``negatives``, the task's rule on
negative values, which its prompt states: ``true`` allows unary minus and negative values
along the way; ``false`` allows neither (a negative intermediate value fails as
``negative_intermediate``). Generation builds the target *from* a random
expression tree over a random subset of the numbers, so every task is solvable and that
expression is the oracle. The verifier accepts any expression that uses each given number
at most once and whose exact rational value is the target.

The verifier never evaluates model text: a hand-written tokenizer and recursive-descent
parser accept only integers, ``+ - * /`` (the Unicode multiplication, division and minus
signs and LaTeX ``\\times``, ``\\div``, ``\\cdot`` are read as such), parentheses and
whitespace, in at most ``MAX_CHARS`` characters and ``MAX_DEPTH`` nested parentheses (or
unary minus signs). Unary minus exists only where the task allows negatives (version 1 has
none); numbers cannot be concatenated. An optional ``= N`` suffix is allowed and must name
the target. Arithmetic is exact (``fractions.Fraction``); a division by zero anywhere makes
the expression invalid.

Dataset rows (``from_row``): ``numbers`` (integers), ``target`` (integer), optional
``negatives`` (default false) and ``use_all`` (default false: every number must then be
used exactly once, reasoning-gym's rule; a shortfall fails as ``numbers_unused``).

Failure reasons: ``parse_error``, ``too_long``, ``division_by_zero``, ``number_not_given``,
``uses_number_twice``, ``numbers_unused``, ``negative_intermediate``, ``wrong_target``,
``false_claim``.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace
from gymforge.verify.puzzles.answer import Outcome, answer_instruction, fail, ok
from gymforge.verify.puzzles.base import PuzzleFamily, PuzzleTruth
from gymforge.verify.puzzles.rows import field, int_list

MAX_CHARS = 200
MAX_DEPTH = 40
PRODUCT_CAP = 5_000
"""Largest intermediate product the generator builds (keeps targets readable)."""

BIG = (25, 50, 75, 100)
_ALIASES = (
    ("\\times", "*"),
    ("\\cdot", "*"),
    ("\\div", "/"),
    ("\u00d7", "*"),  # multiplication sign
    ("\u00f7", "/"),  # division sign
)
_DASHES = str.maketrans({"\u2212": "-", "\u2013": "-"})  # minus sign, en dash
_TOKEN = re.compile(r"\s*(?:(\d+)|([-+*/()]))")
_INT = re.compile(r"\s*\d+\s*")
_SIGNED = re.compile(r"\s*-?\s*\d+\s*")

Node = int | tuple[str, "Node", "Node"] | tuple[str, "Node"]
"""An integer, a binary ``(op, left, right)`` or a unary minus ``("neg", operand)``."""


class ParseError(Exception):
    """The answer is not an expression of the accepted grammar."""


# ---- the safe parser -----------------------------------------------------------------------
def tokenize(text: str) -> list[int | str]:
    """Integers and the characters ``+-*/()``; anything else raises ``ParseError``."""
    tokens: list[int | str] = []
    pos, end = 0, len(text.rstrip())
    while pos < end:
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ParseError(f"unexpected character {text[pos:].lstrip()[:1]!r}")
        tokens.append(int(m[1]) if m[1] is not None else m[2])
        pos = m.end()
    return tokens


class _Parser:
    """expr := term (('+'|'-') term)*; term := atom (('*'|'/') atom)*;
    atom := INTEGER | '(' expr ')' | '-' atom (only with ``unary``)."""

    def __init__(self, tokens: list[int | str], unary: bool = False) -> None:
        self.tokens, self.i, self.depth, self.unary = tokens, 0, 0, unary

    def peek(self) -> int | str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def parse(self) -> Node:
        node = self.expr()
        if self.peek() is not None:
            raise ParseError(f"unexpected {self.peek()!r} after a complete expression")
        return node

    def expr(self) -> Node:
        node = self.term()
        while self.peek() in ("+", "-"):
            op = str(self.tokens[self.i])
            self.i += 1
            node = (op, node, self.term())
        return node

    def term(self) -> Node:
        node = self.atom()
        while self.peek() in ("*", "/"):
            op = str(self.tokens[self.i])
            self.i += 1
            node = (op, node, self.atom())
        return node

    def atom(self) -> Node:
        tok = self.peek()
        self.i += 1
        if isinstance(tok, int):
            return tok
        if tok == "-" and self.unary:
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise ParseError("unary minus nested too deeply")
            node: Node = ("neg", self.atom())
            self.depth -= 1
            return node
        if tok == "(":
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise ParseError("parentheses nested too deeply")
            node = self.expr()
            if self.peek() != ")":
                raise ParseError("missing ')'")
            self.i += 1
            self.depth -= 1
            return node
        raise ParseError("expected a number or '('" if tok is None else f"unexpected {tok!r}")


def parse_expression(text: str, unary: bool = False) -> Node:
    """The expression tree of ``text`` (already stripped of any ``= N``), or ParseError.
    ``unary`` accepts unary minus."""
    for alias, op in _ALIASES:
        text = text.replace(alias, op)
    return _Parser(tokenize(text.translate(_DASHES)), unary).parse()


def evaluate(node: Node, seen: list[Fraction] | None = None) -> Fraction:
    """Exact value; ZeroDivisionError on a division by zero. ``seen`` collects every
    intermediate value (for the no-negatives rule)."""
    if isinstance(node, int):
        return Fraction(node)
    if len(node) == 2:
        value = -evaluate(node[1], seen)
        if seen is not None:
            seen.append(value)
        return value
    op, left, right = node
    a, b = evaluate(left, seen), evaluate(right, seen)
    if seen is not None:
        seen.append(_apply(op, a, b))
        return seen[-1]
    return _apply(op, a, b)


def _apply(op: str, a: Fraction, b: Fraction) -> Fraction:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    return a / b  # Fraction raises ZeroDivisionError for b == 0


def leaves(node: Node) -> list[int]:
    if isinstance(node, int):
        return [node]
    return [n for child in node[1:] for n in leaves(child)]


# ---- generation ----------------------------------------------------------------------------
def _wrap(text: str, atomic: bool) -> str:
    return text if atomic else f"({text})"


def _combine(
    r: random.Random,
    a: tuple[int, str, bool],
    b: tuple[int, str, bool],
    ops: str,
    negatives: bool = False,
) -> tuple[int, str, bool]:
    """Join two subexpressions with a random allowed op. Without ``negatives`` the value
    stays a positive int; with them a subtraction may go below zero (half the time)."""
    op = r.choice(ops)
    if op == "/":
        if abs(b[0]) > abs(a[0]):
            a, b = b, a
        if abs(b[0]) <= 1 or a[0] % b[0]:
            op = r.choice([o for o in ops if o != "/"])
    if op == "-":
        if b[0] > a[0] and not (negatives and r.random() < 0.5):
            a, b = b, a
        if a[0] == b[0]:
            op = "+"
    if op == "*" and abs(a[0] * b[0]) > PRODUCT_CAP:
        op = "+"
    x, y = a[0], b[0]
    value = x + y if op == "+" else x - y if op == "-" else x * y if op == "*" else x // y
    right = _wrap(b[1], b[2] and not b[1].startswith("-"))
    return value, f"{_wrap(a[1], a[2])} {op} {right}", False


RULES = {
    None: "there is no unary minus",  # version 1
    False: "there is no unary minus and no value along the way may be negative",
    True: "unary minus is allowed and values along the way may be negative",
}


class CountdownTruth(PuzzleTruth):
    """``negatives`` is absent in version 1 (no rule about negative values); ``solution``
    in dataset rows, which have ``use_all`` instead."""

    numbers: list[int]
    target: int
    solution: str | None = None
    negatives: bool | None = None
    use_all: bool = False


class CountdownFamily(PuzzleFamily[CountdownTruth]):
    heldout = {"seven_numbers": lambda p: p["count"] == 7}

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, CountdownTruth]:
        count, ops = params["count"], params["ops"]
        negatives = params.get("negatives")  # None: version 1, which had no such rule
        for _ in range(100):
            numbers = r.sample(BIG, params["big"])
            while len(numbers) < count:
                n = r.randint(1, params["small_max"])
                if numbers.count(n) < 2:
                    numbers.append(n)
            used = r.sample(numbers, r.randint(min(3, count), count))
            items = [(n, str(n), True) for n in used]
            while len(items) > 1:
                i, j = sorted(r.sample(range(len(items)), 2))
                b, a = items.pop(j), items.pop(i)
                items.append(_combine(r, a, b, ops, bool(negatives)))
            target, solution, _ = items[0]
            if target not in numbers and 0 < target <= 999:
                break
        numbers.sort()
        listed = ", ".join(map(str, numbers))
        prompt = (
            f"Countdown. Using the numbers {listed} (each at most once; you do not have to "
            "use them all) and the operations +, -, *, / with parentheses, write an "
            f"expression whose value is exactly {target}. Division is exact (fractions may "
            f"appear along the way; dividing by zero is invalid), {RULES[negatives]}, "
            "and digits cannot be glued together into new numbers.\n\n"
            + answer_instruction("<expression>", "(10 - 4) * 7 + 2")
        )
        if negatives is None:  # version 1: the key stays absent
            return prompt, CountdownTruth(numbers=numbers, target=target, solution=solution)
        return prompt, CountdownTruth(
            numbers=numbers, target=target, solution=solution, negatives=negatives
        )

    def from_row(self, row: Mapping[str, Any]) -> CountdownTruth:
        numbers = int_list(row, "numbers")
        return CountdownTruth(
            numbers=sorted(numbers),
            target=field(row, "target", int),
            negatives=field(row, "negatives", bool, False),
            use_all=field(row, "use_all", bool, False),
        )

    def answer_form(self, truth: CountdownTruth) -> tuple[str, str]:
        return "<expression>", "(10 - 4) * 7 + 2"

    def check(self, truth: CountdownTruth, answer: str) -> Outcome:
        text = answer.strip().strip("$").strip()
        if len(text) > MAX_CHARS:
            return fail("too_long", chars=len(text))
        claimed: int | None = None
        negatives = bool(truth.negatives)
        if "=" in text:
            lhs, _, rhs = text.partition("=")
            if not (_SIGNED if negatives else _INT).fullmatch(rhs.translate(_DASHES)):
                return fail("parse_error", error="only '= <integer>' may follow the expression")
            # blanks may follow the sign, as after a unary minus: int() refuses them
            text, claimed = lhs, int("".join(rhs.translate(_DASHES).split()))
        try:
            tree = parse_expression(text, unary=negatives)
        except ParseError as err:
            return fail("parse_error", error=str(err)[:120])
        seen: list[Fraction] | None = None if negatives or truth.negatives is None else []
        try:
            value = evaluate(tree, seen)
        except ZeroDivisionError:
            return fail("division_by_zero")
        available = Counter(truth.numbers)
        used = Counter(leaves(tree))
        for n, times in sorted(used.items()):
            if n not in available:
                return fail("number_not_given", number=n if n < 10**9 else -1)
            if times > available[n]:
                return fail("uses_number_twice", number=n, used=times, available=available[n])
        if truth.use_all and used != available:
            missing = sorted((available - used).elements())
            return fail("numbers_unused", number=missing[0])
        if value != truth.target:
            return fail("wrong_target", value=str(value)[:60], target=truth.target)
        if seen is not None and any(v < 0 for v in seen):
            return fail("negative_intermediate", value=str(min(seen))[:60])
        if claimed is not None and claimed != truth.target:
            return fail("false_claim", claimed=str(claimed)[:60])
        return ok(numbers_used=len(leaves(tree)))

    def oracle_answer(self, truth: CountdownTruth) -> str:
        return str(truth.solution)


def _level(
    count: tuple[int, int],
    ops: tuple[str, ...],
    big: tuple[int, ...],
    small_max: int,
    negatives: tuple[bool, ...] | None = None,
) -> ParamSpace:
    knobs: dict[str, IntKnob | ChoiceKnob] = {
        "count": IntKnob(*count),
        "ops": ChoiceKnob(ops),
        "big": ChoiceKnob(big),
        "small_max": ChoiceKnob((small_max,)),
    }
    if negatives is not None:
        knobs["negatives"] = ChoiceKnob(negatives)
    return ParamSpace(knobs)


V1 = CountdownFamily(
    "puzzles.countdown",
    1,
    {
        1: _level((4, 5), ("+-", "+-*"), (0,), 25),
        2: _level((5, 6), ("+-*/",), (0, 1), 12),
        3: _level((6, 7), ("+-*/",), (1, 2), 10),
    },
)
FAMILY = CountdownFamily(
    "puzzles.countdown",
    2,
    {
        1: _level((4, 5), ("+-", "+-*"), (0,), 25, (False,)),
        2: _level((5, 6), ("+-*/",), (0, 1), 12, (False, True)),
        3: _level((6, 7), ("+-*/",), (1, 2), 10, (False, True)),
    },
    older={1: V1},
)
"""Version 2: the ``negatives`` rule (unary minus where negatives are allowed)."""
