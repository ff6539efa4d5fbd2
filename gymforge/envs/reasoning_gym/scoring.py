"""Judging a reply to a reasoning-gym task.

Answer format: reasoning-gym's own, the text inside the last ``<answer>...</answer>``.
Rules before anything judges it:

1. Reasoning is not an answer: ``<think>`` blocks are dropped (``visible_text``).
2. Several ``<answer>`` blocks that differ (whitespace collapsed) are a hedge and fail.
3. An answer longer than the environment's token budget allows (``answer_chars``) fails
   as ``too_long``.
4. An answer with a number that is not one (``nan``, ``NaN``, ``inf``, ``-Infinity``,
   ``nanj``: what ``float``, ``complex``, ``Decimal`` and ``json`` read as NaN or infinity)
   fails as ``not_a_number``, unless the task's stored answer has one too. A scorer that
   compares numbers reads NaN as within any tolerance (``abs(nan - x) > tol`` is false,
   ``min(1.0, exp(-nan))`` is 1.0): complex_arithmetic and number_sorting paid ``nan``.
   The answer is read as scorers may read it (``not_a_number``): as written, without
   whitespace (complex_arithmetic drops spaces: ``n a n``) and with backslash escapes
   decoded (number_sorting's ``json.loads`` reads ``"\\u006eaN"`` as ``naN``).

Then one of two judges:

- a **strict verifier** (``strict.py``) where gymforge has one for the puzzle (countdown,
  puzzle24): gymforge's own bounded, non-evaluating checker, in this process;
- otherwise the dataset's own ``score_answer``, **in the sandbox** (``sandboxed.py``): one
  job per answer, the entry and the answer as plain data, a plain float back. Its failure
  (crash, exit, timeout...) raises ``ScorerError``, the episode's verifier error.

``passed`` is ``score >= 1``; the raw score (reasoning-gym's partial credit such as 0.05 for
a well-formed wrong answer) is kept in the verdict facts. ``score_trusted`` scores text that
reasoning-gym generated itself (its stored answers) in this process, for the oracle probe;
model text never goes there.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING, Any

from gymforge.envs.reasoning_gym import inside
from gymforge.envs.reasoning_gym.quiet import quiet
from gymforge.envs.reasoning_gym.sandboxed import score_in_sandbox
from gymforge.envs.reasoning_gym.strict import strict_check
from gymforge.verify.puzzles.answer import Outcome, fail, ok, visible_text

if TYPE_CHECKING:
    from gymforge.envs.reasoning_gym.family import ReasoningGymFamily

_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S | re.I)
_SPACES = re.compile(r"\s+")
_NOT_A_NUMBER = re.compile(r"(?<![a-z])[+-]?(?:s?nan|inf(?:inity)?)[ij]?(?![a-z])", re.I)
_HEX = "[0-9a-fA-F]"
_ESCAPE = re.compile(rf"\\(?:u({_HEX}{{4}})|x({_HEX}{{2}})|U({_HEX}{{8}})|N\{{([^}}]{{1,80}})\}})")

CHARS_PER_TOKEN = 8
"""``answer_chars`` allows this many characters per token of the budget: more than any
tokenizer packs into a token of ordinary text, so a reply that fits the budget is never
refused for its length."""


def answer_chars(max_tokens: int) -> int:
    """The longest answer judged for an environment whose replies get ``max_tokens``."""
    return max_tokens * CHARS_PER_TOKEN


def extract(reply: str, max_chars: int) -> tuple[str | None, Outcome | None]:
    """``(answer, None)`` or ``(None, failing Outcome)``: ``no_answer``, ``hedge``,
    ``too_long``."""
    answers = [m.strip() for m in _ANSWER.findall(visible_text(reply))]
    if not answers:
        return None, fail("no_answer")
    if len({_SPACES.sub(" ", a) for a in answers}) > 1:
        return None, fail("hedge", answers=len(answers))
    if len(answers[-1]) > max_chars:
        return None, fail("too_long", chars=len(answers[-1]), limit=max_chars)
    return answers[-1], None


def not_a_number(text: str) -> str | None:
    """The first non-number in ``text`` as a scorer may read it, or None: as written,
    without whitespace, and with ``\\uXXXX``, ``\\xXX``, ``\\UXXXXXXXX`` and ``\\N{...}``
    escapes decoded (as ``json`` and Python literals decode them), either way."""
    plain = _SPACES.sub("", text)
    for reading in (text, plain, _unescaped(text), _unescaped(plain)):
        found = _NOT_A_NUMBER.search(reading)
        if found is not None:
            return found[0]
    return None


def _unescaped(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        if m[4] is not None:
            try:
                return unicodedata.lookup(m[4])
            except KeyError:
                return m[0]
        code = int(m[1] or m[2] or m[3], 16)
        return chr(code) if code <= 0x10FFFF else m[0]

    return _ESCAPE.sub(one, text)


def _outcome(value: float, **facts: Any) -> Outcome:
    return ok(score=value, **facts) if value >= 1.0 else fail("wrong_answer", score=value, **facts)


async def score(
    family: ReasoningGymFamily,
    level: int,
    entry: dict[str, Any],
    reply: str,
    max_chars: int,
    strict: bool = True,
) -> Outcome:
    """The verdict on ``reply`` for ``entry`` (see the module doc); ``strict=False`` skips
    the strict verifier."""
    answer, problem = extract(reply, max_chars)
    if problem is not None or answer is None:
        return problem or fail("no_answer")
    nan = not_a_number(answer)
    if nan is not None and not_a_number(str(entry.get("answer") or "")) is None:
        return fail("not_a_number", token=nan[:20])
    checked = strict_check(family.dataset, entry, answer) if strict else None
    if checked is not None:
        return checked
    dataset_cls, config_cls = family.classes()
    value, facts = await score_in_sandbox(
        dataset_cls, config_cls, family.configs[level - 1], entry, answer
    )
    return _outcome(value, **facts)


def score_trusted(
    family: ReasoningGymFamily, level: int, entry: dict[str, Any], answer: str, strict: bool = True
) -> Outcome:
    """The verdict on reasoning-gym's own ``answer`` (never model text), in this process,
    on the entry exactly as the sandbox would see it; the scorer's output is swallowed."""
    checked = strict_check(family.dataset, entry, answer) if strict else None
    if checked is not None:
        return checked
    plain = inside.decode(inside.encode(entry))
    with quiet():
        value = float(family.scorer(level).score_answer(answer, plain))
    return _outcome(value)
