"""Countdown: reach the target from the given numbers with + - * / and parentheses.

Knobs: ``count`` numbers offered, ``big`` of them drawn from 25/50/75/100 and the rest
from ``1..small_max`` (each small value at most twice), and the ``ops`` the generator may
use (the agent may always use all four). Generation builds the target *from* a random
expression tree over a random subset of the numbers, so every task is solvable and that
expression is the oracle. The verifier accepts any expression that uses each given number
at most once and whose exact rational value is the target.

The verifier never evaluates model text: a hand-written tokenizer and recursive-descent
parser accept only integers, ``+ - * /`` (the Unicode multiplication, division and minus
signs and LaTeX ``\\times``, ``\\div``, ``\\cdot`` are read as such), parentheses and
whitespace, in at most ``MAX_CHARS`` characters and ``MAX_DEPTH`` nested parentheses. There
are no unary operators (a positive target never needs one) and numbers cannot be
concatenated. An optional ``= N`` suffix is allowed and must name the target. Arithmetic is
exact (``fractions.Fraction``); a division by zero anywhere makes the expression invalid.

Failure reasons: ``parse_error``, ``too_long``, ``division_by_zero``, ``number_not_given``,
``uses_number_twice``, ``wrong_target``, ``false_claim``.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from gymforge.envs.puzzles.answer import Outcome, answer_instruction, fail, ok
from gymforge.envs.puzzles.base import PuzzleFamily
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace

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

Node = int | tuple[str, "Node", "Node"]


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
    atom := INTEGER | '(' expr ')'."""

    def __init__(self, tokens: list[int | str]) -> None:
        self.tokens, self.i, self.depth = tokens, 0, 0

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


def parse_expression(text: str) -> Node:
    """The expression tree of ``text`` (already stripped of any ``= N``), or ParseError."""
    for alias, op in _ALIASES:
        text = text.replace(alias, op)
    return _Parser(tokenize(text.translate(_DASHES))).parse()


def evaluate(node: Node) -> Fraction:
    """Exact value; ZeroDivisionError on a division by zero."""
    if isinstance(node, int):
        return Fraction(node)
    op, left, right = node
    a, b = evaluate(left), evaluate(right)
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
    return leaves(node[1]) + leaves(node[2])


# ---- generation ----------------------------------------------------------------------------
def _wrap(text: str, atomic: bool) -> str:
    return text if atomic else f"({text})"


def _combine(
    r: random.Random, a: tuple[int, str, bool], b: tuple[int, str, bool], ops: str
) -> tuple[int, str, bool]:
    """Join two subexpressions with a random allowed op; the value stays a positive int."""
    op = r.choice(ops)
    if op == "/":
        if b[0] > a[0]:
            a, b = b, a
        if b[0] <= 1 or a[0] % b[0]:
            op = r.choice([o for o in ops if o != "/"])
    if op == "-":
        if b[0] > a[0]:
            a, b = b, a
        if a[0] == b[0]:
            op = "+"
    if op == "*" and a[0] * b[0] > PRODUCT_CAP:
        op = "+"
    x, y = a[0], b[0]
    value = x + y if op == "+" else x - y if op == "-" else x * y if op == "*" else x // y
    return value, f"{_wrap(a[1], a[2])} {op} {_wrap(b[1], b[2])}", False


class CountdownFamily(PuzzleFamily):
    heldout = {"seven_numbers": lambda p: p["count"] == 7}

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, dict[str, Any]]:
        count, ops = params["count"], params["ops"]
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
                items.append(_combine(r, a, b, ops))
            target, solution, _ = items[0]
            if target not in numbers and target <= 999:
                break
        numbers.sort()
        listed = ", ".join(map(str, numbers))
        prompt = (
            f"Countdown. Using the numbers {listed} (each at most once; you do not have to "
            "use them all) and the operations +, -, *, / with parentheses, write an "
            f"expression whose value is exactly {target}. Division is exact (fractions may "
            "appear along the way; dividing by zero is invalid), there is no unary minus, "
            "and digits cannot be glued together into new numbers.\n\n"
            + answer_instruction("<expression>", "(10 - 4) * 7 + 2")
        )
        return prompt, {"numbers": numbers, "target": target, "solution": solution}

    def check(self, truth: Mapping[str, Any], answer: str) -> Outcome:
        text = answer.strip().strip("$").strip()
        if len(text) > MAX_CHARS:
            return fail("too_long", chars=len(text))
        claimed: int | None = None
        if "=" in text:
            lhs, _, rhs = text.partition("=")
            if not _INT.fullmatch(rhs):
                return fail("parse_error", error="only '= <integer>' may follow the expression")
            text, claimed = lhs, int(rhs)
        try:
            tree = parse_expression(text)
        except ParseError as err:
            return fail("parse_error", error=str(err)[:120])
        try:
            value = evaluate(tree)
        except ZeroDivisionError:
            return fail("division_by_zero")
        available = Counter(truth["numbers"])
        for n, times in sorted(Counter(leaves(tree)).items()):
            if n not in available:
                return fail("number_not_given", number=n if n < 10**9 else -1)
            if times > available[n]:
                return fail("uses_number_twice", number=n, used=times, available=available[n])
        if value != truth["target"]:
            return fail("wrong_target", value=str(value)[:60], target=truth["target"])
        if claimed is not None and claimed != truth["target"]:
            return fail("false_claim", claimed=str(claimed)[:60])
        return ok(numbers_used=len(leaves(tree)))

    def oracle_answer(self, truth: Mapping[str, Any]) -> str:
        return str(truth["solution"])


def _level(
    count: tuple[int, int], ops: tuple[str, ...], big: tuple[int, ...], small_max: int
) -> ParamSpace:
    return ParamSpace(
        {
            "count": IntKnob(*count),
            "ops": ChoiceKnob(ops),
            "big": ChoiceKnob(big),
            "small_max": ChoiceKnob((small_max,)),
        }
    )


FAMILY = CountdownFamily(
    "puzzles.countdown",
    1,
    {
        1: _level((4, 5), ("+-", "+-*"), (0,), 25),
        2: _level((5, 6), ("+-*/",), (0, 1), 12),
        3: _level((6, 7), ("+-*/",), (1, 2), 10),
    },
)
