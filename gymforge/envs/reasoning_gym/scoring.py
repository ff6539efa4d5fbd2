"""Judging a reply with a reasoning-gym dataset's own ``score_answer``, safely.

Answer format: reasoning-gym's own, the text inside the last ``<answer>...</answer>``.
Rules before the dataset's scorer sees anything:

1. Reasoning is not an answer: ``<think>`` blocks are dropped (``visible_text``).
2. Several ``<answer>`` blocks that differ (whitespace collapsed) are a hedge and fail.
3. An answer over ``MAX_ANSWER_CHARS`` fails as ``too_long``.
4. Scorers that evaluate text (``eval``, ``sympy.parse_expr``...) run with those evaluators
   guarded (``guard.py``): text that is not plain data is never evaluated, and an answer
   that needed it fails as ``unsafe_answer`` unless the scorer still gave full marks.

``passed`` is ``score >= 1``; the raw score (reasoning-gym's partial credit such as 0.05 for
a well-formed wrong answer) is kept in the verdict facts.
"""

from __future__ import annotations

import re
from typing import Any

from reasoning_gym.dataset import ProceduralDataset

from gymforge.envs.puzzles.answer import MAX_ANSWER_CHARS, Outcome, fail, ok, visible_text
from gymforge.envs.reasoning_gym.guard import UnsafeAnswer, install, scoring

_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S | re.I)
_SPACES = re.compile(r"\s+")


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
    scorer_class: type = type(scorer)  # reasoning-gym is untyped: type(Any) is no Hashable
    install(scorer_class)
    with scoring(entry) as guard:
        try:
            value = float(scorer.score_answer(answer, entry))
        except UnsafeAnswer:
            value = 0.0
    if value >= 1.0:
        return ok(score=value)
    if guard.refused:
        return fail("unsafe_answer", error=guard.refused[0], score=value)
    return fail("wrong_answer", score=value)
