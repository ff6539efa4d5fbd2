"""Verifiers' math pattern for reasoning models: ``ThinkParser(extract_fn=extract_boxed_answer)``
(the answer is the last ``\\boxed{}`` after ``</think>``), a correctness reward and the
parser's format reward at weight 0."""

from __future__ import annotations

from typing import Any

from tests.interop.vf_examples_data import datasets


def load_environment(**kwargs: Any) -> Any:
    import verifiers.legacy as vf
    from verifiers.legacy.utils.data_utils import extract_boxed_answer

    parser = vf.ThinkParser(extract_fn=extract_boxed_answer)

    def correct_answer(completion: Any, answer: str, **_: Any) -> float:
        return 1.0 if (parser.parse_answer(completion) or "").strip() == answer else 0.0

    rubric = vf.Rubric(
        funcs=[correct_answer, parser.get_format_reward_func()], weights=[1.0, 0.0], parser=parser
    )
    train, held = datasets()
    return vf.SingleTurnEnv(
        dataset=train,
        eval_dataset=held,
        system_prompt="Think inside <think></think>, then give the answer in \\boxed{}.",
        parser=parser,
        rubric=rubric,
        **kwargs,
    )
