"""The default ``Parser`` (the reply is the answer) with a correctness reward."""

from __future__ import annotations

from typing import Any

from tests.interop.vf_examples_data import datasets


def load_environment(**kwargs: Any) -> Any:
    import verifiers.legacy as vf

    parser = vf.Parser()

    def correct_answer(completion: Any, answer: str, **_: Any) -> float:
        return 1.0 if (parser.parse_answer(completion) or "").strip() == answer else 0.0

    rubric = vf.Rubric(funcs=[correct_answer], parser=parser)
    train, held = datasets()
    return vf.SingleTurnEnv(
        dataset=train, eval_dataset=held, parser=parser, rubric=rubric, **kwargs
    )
