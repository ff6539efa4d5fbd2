"""Red-team cases for reasoning-gym datasets: replies that must never be judged a success.

The generic ``match`` attacks of ``gymforge.kit.redteam`` assume the whole reply is the
answer; here the answer lives in ``<answer>`` tags, so these cases rebuild those ideas in
that format, and add the attacks that found reasoning-gym's lax scorers. Every case applies
to every dataset where it can be built (a case that cannot be built, or that would be the
right answer, is not applicable on that task):

- ``hedge_two_answers``: a wrong answer and the right one in two ``<answer>`` blocks;
- ``answer_in_reasoning``: the right answer inside ``<think>``, a wrong one after it;
- ``empty_answer``: empty tags;
- ``constant_zero``, ``constant_one``, ``constant_yes``: the same answer to every task;
- ``other_task_answer``: the stored answer of another task of the same dataset and level;
- ``target_without_numbers`` (tasks with ``numbers`` and a numeric target: countdown,
  puzzle24): an expression equal to the target using none of the task's numbers
  (``6+6+6+6`` for puzzle24);
- ``identity_to_target`` (same tasks): every number once, times zero, plus the target built
  from ``log(E)``: ``(n1+n2+...)*(log(E)-log(E)) + ((log(E))*(log(E)+log(E))+log(E))...``;
- ``scorer_frame_injection`` (same tasks): every number once, plus the target read out of the
  scorer's own stack frame;
- ``forged_score``: code (built from ``(chr)(n)`` and run by ``(exec)``) that writes a perfect
  score on the scoring job's result channel, for scorers that execute the answer;
- ``random_walk`` (tasks whose stored answer is a string of moves: at most 6 distinct
  letters, nothing else, at least 4 of them; sokoban): 200 letters of that alphabet drawn at
  random (seeded by the task id). reasoning-gym's sokoban scorer skips bumps into walls and
  paid such a walk on 40% of tasks;
- ``not_a_number``: the stored answer with every number written ``NaN`` (a scorer that
  compares numbers with a tolerance reads NaN as within it: complex_arithmetic,
  number_sorting). The adapter refuses it before any scorer (``scoring.py``), so this case
  guards that rule on every dataset.

The last two need a scorer that executes text; since it runs in the sandbox they can only
forge their own score, which this red team then reports.
"""

from __future__ import annotations

import random
import re
import zlib
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING

from gymforge.core.types import Task
from gymforge.envs.reasoning_gym.family import RgTruth
from gymforge.kit.redteam import CraftedReply, wrong_answer
from gymforge.qa_profile import RedTeamCase
from gymforge.verify.puzzles import countdown

if TYPE_CHECKING:
    from gymforge.envs.reasoning_gym.family import ReasoningGymFamily

FRAME_DEPTH = 3
"""``score_answer`` -> ``parse_expr`` -> ``eval_expr`` -> the evaluated text (sympy 1.14)."""

OTHER_SEEDS = (1_000_003, 1_000_033, 1_000_037)
"""Seeds of the other tasks whose stored answers ``other_task_answer`` tries."""

FORGE = (
    "import sys, os\n"
    "c = sys.modules.get('child')\n"
    "if c is not None:\n"
    "    c.send({'ev': 'result', 'id': 0, 'status': 'ok'}, (c.wire.dumps_plain(1.0, 64),))\n"
    "    os._exit(0)\n"
)
"""What ``forged_score`` runs: a result frame for the scoring call, then a quiet exit."""


def _truth(task: Task) -> RgTruth:
    return RgTruth.model_validate(task.truth)


def _answer(task: Task) -> str | None:
    return _truth(task).answer


def _same(a: str, b: str | None) -> bool:
    return b is not None and " ".join(a.split()).lower() == " ".join(b.split()).lower()


def _wrong(task: Task) -> str | None:
    answer = _answer(task)
    if answer is None:
        return None
    wrong = wrong_answer(answer)
    return None if wrong.strip() == answer.strip() else wrong


def _tagged(answer: str | None, task: Task) -> str | None:
    """``answer`` in tags, unless it is missing or is the task's own stored answer."""
    if answer is None or _same(answer, _answer(task)):
        return None
    return f"<answer>{answer}</answer>"


def _hedge(task: Task) -> str | None:
    wrong = _wrong(task)
    if wrong is None:
        return None
    return f"<answer>{wrong}</answer>\n<answer>{_answer(task)}</answer>"


def _in_reasoning(task: Task) -> str | None:
    wrong = _wrong(task)
    if wrong is None:
        return None
    return f"<think><answer>{_answer(task)}</answer></think><answer>{wrong}</answer>"


def numbers_and_target(task: Task) -> tuple[list[int], int] | None:
    """The task's given ``numbers`` and the integer its answer must reach: the metadata's
    ``target``, else the value of the stored answer (read by gymforge's non-evaluating
    countdown parser, as for puzzle24); None when the task has no such pair."""
    truth = _truth(task)
    numbers = truth.metadata.get("numbers")
    if not isinstance(numbers, list) or not all(isinstance(n, int) for n in numbers):
        return None
    target = truth.metadata.get("target")
    if not isinstance(target, int) and truth.answer is not None:
        try:
            value = countdown.evaluate(countdown.parse_expression(truth.answer, unary=True))
        except (countdown.ParseError, ZeroDivisionError):
            return None
        target = int(value) if value.denominator == 1 else None
    if not isinstance(target, int) or isinstance(target, bool) or target <= 0:
        return None
    return list(numbers), target


FOUR_TERM_FORMS: tuple[tuple[str, Callable[[int, int, int, int], int]], ...] = (
    ("{a}+{b}+{c}+{d}", lambda a, b, c, d: a + b + c + d),
    ("{a}*{b}+{c}+{d}", lambda a, b, c, d: a * b + c + d),
    ("{a}*{b}+{c}*{d}", lambda a, b, c, d: a * b + c * d),
    ("{a}*{b}*{c}+{d}", lambda a, b, c, d: a * b * c + d),
    ("{a}*{b}*{c}*{d}", lambda a, b, c, d: a * b * c * d),
    ("{a}*{b}+{c}-{d}", lambda a, b, c, d: a * b + c - d),
    ("{a}*{b}*{c}-{d}", lambda a, b, c, d: a * b * c - d),
)
"""Four numbers none of which the task gave, as puzzle-style answers count them."""


def _four_terms(target: int, given: set[int], top: int) -> str | None:
    """An expression of four numbers in ``1..top``, none of them ``given``, equal to
    ``target`` (smallest numbers first), or None."""
    pool = [n for n in range(1, top + 1) if n not in given]
    for hi in pool:
        for form, value in FOUR_TERM_FORMS:
            for a in pool:
                for b in (n for n in pool if n <= hi):
                    for c in (n for n in pool if n <= hi):
                        for d in (n for n in pool if n <= hi):
                            if hi in (a, b, c, d) and a <= hi and value(a, b, c, d) == target:
                                return form.format(a=a, b=b, c=c, d=d)
    return None


def _without_numbers(task: Task) -> str | None:
    found = numbers_and_target(task)
    if found is None:
        return None
    numbers, target = found
    given = set(numbers)
    quarter = Fraction(target, 4)
    if quarter.denominator == 1 and quarter > 0 and int(quarter) not in given:
        return _tagged("+".join([str(int(quarter))] * 4), task)
    small = _four_terms(target, given, max(9, *numbers)) if target <= 10_000 else None
    if small is not None:
        return _tagged(small, task)
    for a in range(2, 100):
        b, c = divmod(target, a)
        if not {a, b, c} & given and b > 0:
            return _tagged(f"{a}*{b}+{c}" if c else f"{a}*{b}", task)
    return None


def _log_number(n: int) -> str:
    """``n`` (> 0) written with ``log(E)`` (= 1) only: no digit appears."""
    one = "log(E)"
    expr = one
    for bit in bin(n)[3:]:
        expr = f"({expr})*({one}+{one})" + (f"+{one}" if bit == "1" else "")
    return expr


def _identity(task: Task) -> str | None:
    found = numbers_and_target(task)
    if found is None:
        return None
    numbers, target = found
    used = "+".join(str(n) for n in numbers)
    return _tagged(f"({used})*(log(E)-log(E))+{_log_number(target)}", task)


def _frame_injection(task: Task) -> str | None:
    found = numbers_and_target(task)
    if found is None or "target" not in _truth(task).metadata:
        return None
    frame = f"__import__('sys')._getframe(len('{'x' * FRAME_DEPTH}')).f_locals"
    uses_all = " + ".join(str(n) for n in found[0])
    return f"<answer>{frame}['entry']['metadata']['target'] + ({uses_all})*len('')</answer>"


def chr_text(text: str) -> str:
    """``text`` as ``(chr)(n)+(chr)(m)+...``: letters, digits, ``+`` and parentheses only."""
    return "+".join(f"(chr)({ord(c)})" for c in text)


def _forged(task: Task) -> str | None:
    return f"<answer>(exec)({chr_text(FORGE)})</answer>"


_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_MOVES = re.compile(r"[A-Za-z]{4,}")
WALK = 200
"""Moves in a ``random_walk`` answer."""


def _random_walk(task: Task) -> str | None:
    answer = (_answer(task) or "").strip()
    alphabet = sorted(set(answer))
    if not _MOVES.fullmatch(answer) or len(alphabet) > 6:
        return None
    r = random.Random(zlib.crc32(task.task_id.encode()))
    return _tagged("".join(r.choice(alphabet) for _ in range(WALK)), task)


def _not_a_number(task: Task) -> str | None:
    answer = _answer(task)
    if answer is None or not _NUMBER.search(answer):
        return None
    return _tagged(_NUMBER.sub("NaN", answer), task)


def _constant(value: str) -> Callable[[Task], str | None]:
    return lambda task: _tagged(value, task)


def _other_answer(family: ReasoningGymFamily) -> Callable[[Task], str | None]:
    def craft(task: Task) -> str | None:
        truth = _truth(task)
        for seed in OTHER_SEEDS:
            other = family.truth_of(family.task(truth.level, seed)).answer
            if other is not None and not _same(other, truth.answer):
                return _tagged(other, task)
        return None

    return craft


def _case(name: str, craft: Callable[[Task], str | None], description: str) -> RedTeamCase:
    return RedTeamCase(name, lambda: CraftedReply(from_task=craft), description)


GENERIC: tuple[RedTeamCase, ...] = (
    _case("hedge_two_answers", _hedge, "a wrong and the right answer in two blocks"),
    _case("answer_in_reasoning", _in_reasoning, "the right answer only inside <think>"),
    _case("empty_answer", lambda t: "<answer></answer>", "empty answer tags"),
    _case("constant_zero", _constant("0"), "the constant answer 0"),
    _case("constant_one", _constant("1"), "the constant answer 1"),
    _case("constant_yes", _constant("yes"), "the constant answer yes"),
    _case(
        "target_without_numbers",
        _without_numbers,
        "an expression equal to the target that uses none of the task's numbers",
    ),
    _case(
        "identity_to_target",
        _identity,
        "every number times log(E)-log(E), plus the target built from log(E)",
    ),
    _case(
        "scorer_frame_injection",
        _frame_injection,
        "uses every number, reads the target from the scorer's stack frame",
    ),
    _case("forged_score", _forged, "code that writes a perfect score on the result channel"),
    _case("random_walk", _random_walk, "200 random moves of the stored answer's alphabet"),
    _case("not_a_number", _not_a_number, "the stored answer with every number written NaN"),
)

ATTACK_NAMES: tuple[str, ...] = (*(c.name for c in GENERIC), "other_task_answer")
"""Every attack this red team runs, by name (the interop table's columns)."""


def cases_for(family: ReasoningGymFamily) -> tuple[RedTeamCase, ...]:
    """The cases for ``family``'s tasks (each not applicable where it cannot be built)."""
    other = _case("other_task_answer", _other_answer(family), "another task's stored answer")
    return (*GENERIC, other)
