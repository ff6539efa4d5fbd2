"""Red-team cases for a Verifiers environment with an oracle: replies that must never pass.

Every case is written in the reply form the oracle passed with (``replies.ReplyForm``: the
parser's tags or think block), so the rubric reads each attack's answer where it reads the
right one; the generic ``match`` attacks of ``gymforge.kit.redteam`` would take the whole
reply for the answer. A case that cannot be built for a task, or whose answer would be the
row's own, is not applicable on that task.

- ``empty_answer``: nothing where the answer goes;
- ``wrong_answer``: another answer of the same shape (n+1 for an integer);
- ``constant_zero``, ``constant_one``, ``constant_yes``: the same answer to every task;
- ``other_row_answer``: the answer of another training row;
- ``hedge_or``, ``hedge_or_right_last``: ``RIGHT or WRONG`` and ``WRONG or RIGHT`` as
  the answer (the second as below);
- ``enumerate_candidates``, ``enumerate_right_first``, ``enumerate_right_last``: a wrong
  answer, the right one and "none of these", one a line, the right one in the middle, first
  and last (the last three only in forms with a slot for the answer apart from the
  reasoning, where text before a last line cannot be reasoning the format allows). The
  right answer takes each end of the answer and of its lines, so a rubric that reads the
  first or last word or line of the answer is paid by one of them;
- ``answer_in_reasoning`` (forms with a reasoning slot): the right answer in every other
  slot (the think block, the other XML fields), a wrong one as the answer;
- ``two_answer_blocks`` (XML forms): the whole reply twice, first with a wrong answer.

The rubric scoring them is the environment author's code, run in the sandbox like every
policy reply; a case it pays is a lenient rubric, which the red team reports.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from gymforge.core.types import Task
from gymforge.envs.verifiers_adapter.replies import ReplyForm
from gymforge.envs.verifiers_adapter.rows import VfRowTruth
from gymforge.kit.redteam import CraftedReply, wrong_answer
from gymforge.qa_profile import RedTeamCase
from gymforge.tasks.dataset import Dataset

OTHER_ROWS = 64
"""Training rows whose answers ``other_row_answer`` may borrow."""

Craft = Callable[[str], str | None]
"""From the row's answer, the attack's reply (None when it does not apply)."""


def train_answers(train: Dataset) -> tuple[str, ...]:
    """The string answers of the first ``OTHER_ROWS`` training rows, in dataset order."""
    answers = (VfRowTruth.model_validate(t.truth).row.get("answer") for t in train.tasks)
    return tuple(a for a in list(answers)[:OTHER_ROWS] if isinstance(a, str) and a)


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()).lower() == " ".join(b.split()).lower()


def _answer_cases(form: ReplyForm, others: Sequence[str]) -> dict[str, Craft]:
    def as_answer(value: Callable[[str], str | None]) -> Craft:
        def craft(gold: str) -> str | None:
            text = value(gold)
            return None if text is None or _same(text, gold) else form.reply(text)

        return craft

    def other(gold: str) -> str | None:
        return next((a for a in others if not _same(a, gold)), None)

    cases: dict[str, Craft] = {
        "empty_answer": as_answer(lambda gold: ""),
        "wrong_answer": as_answer(wrong_answer),
        "constant_zero": as_answer(lambda gold: "0"),
        "constant_one": as_answer(lambda gold: "1"),
        "constant_yes": as_answer(lambda gold: "yes"),
        "other_row_answer": as_answer(other),
        "hedge_or": as_answer(lambda gold: f"{gold.strip()} or {wrong_answer(gold)}"),
        "enumerate_candidates": as_answer(
            lambda gold: "\n".join([wrong_answer(gold), gold.strip(), "none of these"])
        ),
    }
    if form.slots:
        cases["answer_in_reasoning"] = lambda gold: form.reply(wrong_answer(gold), gold)
        # the answer has its own slot, apart from the reasoning: the right answer at either
        # end of a hedge or a list there is a hedge, whichever end the rubric reads (with
        # no slot, text before a last line may be the reasoning the format allows)
        cases["hedge_or_right_last"] = as_answer(lambda gold: f"{wrong_answer(gold)} or {gold}")
        cases["enumerate_right_first"] = as_answer(
            lambda gold: "\n".join([gold.strip(), wrong_answer(gold), "none of these"])
        )
        cases["enumerate_right_last"] = as_answer(
            lambda gold: "\n".join([wrong_answer(gold), "none of these", gold.strip()])
        )
    if form.label.startswith("XMLParser"):
        cases["two_answer_blocks"] = lambda gold: (
            f"{form.reply(wrong_answer(gold))}\n{form.reply(gold)}"
        )
    return cases


def _from_task(craft: Craft) -> Callable[[Task], str | None]:
    def build(task: Task) -> str | None:
        gold = VfRowTruth.model_validate(task.truth).row.get("answer")
        return craft(gold) if isinstance(gold, str) and gold else None

    return build


def _policy(craft: Craft) -> CraftedReply:
    return CraftedReply(from_task=_from_task(craft))


def cases_for(form: ReplyForm, others: Sequence[str]) -> tuple[RedTeamCase, ...]:
    """The cases for an environment whose oracle replies in ``form``; ``others`` are
    training answers ``other_row_answer`` may use."""
    return tuple(
        RedTeamCase(
            name,
            partial(_policy, craft),
            f"{name.replace('_', ' ')}, written as {form.label}",
        )
        for name, craft in _answer_cases(form, others).items()
    )
