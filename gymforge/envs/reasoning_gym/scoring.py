"""Judging a reply with a reasoning-gym dataset's own ``score_answer``, safely.

Answer format: reasoning-gym's own, the text inside the last ``<answer>...</answer>``.
Rules before the dataset's scorer sees anything:

1. Reasoning is not an answer: ``<think>`` blocks are dropped (``visible_text``).
2. Several ``<answer>`` blocks that differ (whitespace collapsed) are a hedge and fail.
3. An answer over ``MAX_ANSWER_CHARS`` fails as ``too_long``.
4. **Scorers that evaluate text.** Some reasoning-gym scorers hand the answer to
   ``sympy.parse_expr`` or ``eval`` (countdown, puzzle24, n_queens, spiral_matrix, the
   integration datasets...), which executes it: an answer like
   ``__import__('numpy').__setattr__('isclose', ...)`` would rewrite the scorer and be judged
   correct, or run anything on the grading host. For those datasets (found by reading the
   dataset module's source for ``parse_expr(``, ``sympify(``, ``eval(``, ``exec(``) the
   answer must be *plain data*: digits, letters, whitespace, ``+-*/().,=<>[]{}|&~^`` only
   (no ``_``, quotes, ``:``, ``;``, ``@``, ``\\``, ``!``, ``#``, ``$``, ``?``); no attribute
   access; no Python keyword but ``and``/``or``/``not`` (no comprehension or lambda); no call
   except of the allowed maths names (``sqrt``, ``sin``, ``log``...); no power of a number
   (``2**40`` or a tower can hang the scorer) and no shift; no ``*`` in an answer holding a
   list, set or tuple (``[0]*10**9``). Anything else fails as ``unsafe_answer`` before the
   scorer runs. The gate bounds what the scorer can be made to *do*; it does not put the
   scorer under a time limit.

``passed`` is ``score >= 1``; the raw score (reasoning-gym's partial credit such as 0.05 for
a well-formed wrong answer) is kept in the verdict facts.
"""

from __future__ import annotations

import inspect
import keyword
import re
import sys
from functools import cache
from typing import Any

from reasoning_gym.dataset import ProceduralDataset

from gymforge.envs.puzzles.answer import MAX_ANSWER_CHARS, Outcome, fail, ok, visible_text

_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S | re.I)
_SPACES = re.compile(r"\s+")
_EVALUATES = re.compile(r"\b(?:parse_expr|sympify|eval|exec)\s*\(")

_PLAIN = re.compile(r"[0-9A-Za-z\s+\-*/().,=<>\[\]{}|&~^]*")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CALL = re.compile(r"([A-Za-z][A-Za-z0-9]*)\s*\(")
_ATTRIBUTE = re.compile(r"\.\s*[A-Za-z]")
_SYMBOL_POWER = re.compile(r"[A-Za-z]\s*(?:\*\*|\^)\s*\d{1,2}(?![\d.])")
_KEYWORDS = frozenset(keyword.kwlist) - {"and", "or", "not", "True", "False", "None"}
SAFE_CALLS = frozenset(
    ("sqrt", "cbrt", "sin", "cos", "tan", "asin", "acos", "atan", "log", "ln", "exp", "Abs", "abs")
)


@cache
def evaluates_text(dataset_cls: type[ProceduralDataset]) -> bool:
    """Whether the dataset's module hands text to ``parse_expr``/``sympify``/``eval``/``exec``."""
    module = sys.modules.get(dataset_cls.__module__)
    try:
        source = inspect.getsource(module) if module is not None else ""
    except (OSError, TypeError):
        return True  # cannot tell: treat it as evaluating
    return _EVALUATES.search(source) is not None


def unsafe(answer: str) -> str | None:
    """Why ``answer`` may not reach a text-evaluating scorer, or None when it is plain data."""
    if not _PLAIN.fullmatch(answer):
        bad = next(c for c in answer if not _PLAIN.fullmatch(c))
        return f"character {bad!r} is not allowed in an answer to this dataset"
    if _ATTRIBUTE.search(answer):
        return "attribute access is not allowed"
    word = next((w for w in _WORD.findall(answer) if w in _KEYWORDS), None)
    if word is not None:
        return f"the keyword {word!r} is not allowed"
    for m in _CALL.finditer(answer):
        if m[1] not in SAFE_CALLS:
            return f"call of {m[1]!r} is not allowed"
    rest = _SYMBOL_POWER.sub("x", answer)
    if "**" in rest or "^" in rest:
        return "only a symbol may be raised to a power, by a literal of at most two digits"
    if "<<" in answer or ">>" in answer:
        return "shifts are not allowed"
    if "*" in answer and any(c in answer for c in "[{,"):
        return "sequence repetition is not allowed (no '*' next to a list, set or tuple)"
    return None


def extract(reply: str) -> tuple[str | None, Outcome | None]:
    """``(answer, None)`` or ``(None, failing Outcome)``: ``no_answer``, ``hedge``,
    ``too_long``."""
    answers = [m.strip() for m in _ANSWER.findall(visible_text(reply))]
    if not answers:
        return None, fail("no_answer")
    if len({_SPACES.sub(" ", a) for a in answers}) > 1:
        return None, fail("hedge", answers=len(answers))
    if len(answers[-1]) > MAX_ANSWER_CHARS:
        return None, fail("too_long", chars=len(answers[-1]))
    return answers[-1], None


def score(scorer: ProceduralDataset, entry: dict[str, Any], reply: str) -> Outcome:
    """The verdict on ``reply`` for ``entry`` (see the module doc)."""
    answer, problem = extract(reply)
    if problem is not None or answer is None:
        return problem or fail("no_answer")
    if evaluates_text(type(scorer)):
        why = unsafe(answer)
        if why is not None:
            return fail("unsafe_answer", error=why)
    value = float(scorer.score_answer(answer, entry))
    if value >= 1.0:
        return ok(score=value)
    return fail("wrong_answer", score=value)
