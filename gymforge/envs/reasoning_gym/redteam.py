"""Red-team cases for reasoning-gym datasets: replies that must never be judged a success.

The generic ``match`` attacks of ``gymforge.kit.redteam`` assume the whole reply is the
answer; here the answer lives in ``<answer>`` tags, so these cases rebuild the same ideas in
that format, from the oracle's stored answer:

- ``hedge_two_answers``: a wrong answer and the right one in two ``<answer>`` blocks;
- ``answer_in_reasoning``: the right answer inside ``<think>``, a wrong one after it;
- ``empty_answer``: empty tags;
- ``scorer_frame_injection`` (datasets whose metadata has ``numbers`` and ``target``, such as
  countdown): an expression that uses every number once but reads the target out of the
  scorer's own stack frame. reasoning-gym's countdown ``score_answer`` gives it full marks,
  because ``sympy.parse_expr`` executes it; the adapter's guard must refuse it.

A wrong answer is the oracle's answer changed by ``wrong_answer``; when that happens to be
correct too, the case is not applicable on that task.
"""

from __future__ import annotations

from collections.abc import Callable

from gymforge.core.qa_profile import RedTeamCase
from gymforge.core.types import Task
from gymforge.envs.reasoning_gym.family import RgTruth
from gymforge.kit.redteam import CraftedReply, wrong_answer

FRAME_DEPTH = 3
"""``score_answer`` -> ``parse_expr`` -> ``eval_expr`` -> the evaluated text (sympy 1.14)."""


def _answer(task: Task) -> str | None:
    return RgTruth.model_validate(task.truth).answer


def _wrong(task: Task) -> str | None:
    answer = _answer(task)
    if answer is None:
        return None
    wrong = wrong_answer(answer)
    return None if wrong.strip() == answer.strip() else wrong


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


def _frame_injection(task: Task) -> str | None:
    meta = RgTruth.model_validate(task.truth).metadata
    numbers = meta.get("numbers")
    if not isinstance(numbers, list) or "target" not in meta:
        return None
    frame = f"__import__('sys')._getframe(len('{'x' * FRAME_DEPTH}')).f_locals"
    uses_all = " + ".join(str(n) for n in numbers)
    return f"<answer>{frame}['entry']['metadata']['target'] + ({uses_all})*len('')</answer>"


def _case(name: str, craft: Callable[[Task], str | None], description: str) -> RedTeamCase:
    return RedTeamCase(name, lambda: CraftedReply(from_task=craft), description)


GENERIC: tuple[RedTeamCase, ...] = (
    _case("hedge_two_answers", _hedge, "a wrong and the right answer in two blocks"),
    _case("answer_in_reasoning", _in_reasoning, "the right answer only inside <think>"),
    _case("empty_answer", lambda t: "<answer></answer>", "empty answer tags"),
)


INJECTION = _case(
    "scorer_frame_injection",
    _frame_injection,
    "uses every number, reads the target from the scorer's stack frame",
)


def cases_for(probe: Task) -> tuple[RedTeamCase, ...]:
    """The cases for the dataset ``probe`` (one of its tasks) comes from: the frame injection
    only where it can be built."""
    return (*GENERIC, INJECTION) if _frame_injection(probe) is not None else GENERIC
