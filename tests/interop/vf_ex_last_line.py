"""A lenient rubric that reads the last line of the parsed ``<answer>`` as the answer
(``XMLParser(["think", "answer"])``: the reasoning has its own field). Its oracle passes; a
list of candidates in the answer field with the right one last is paid, and the red team
must catch it."""

from __future__ import annotations

from typing import Any

from tests.interop.vf_examples_data import datasets


def load_environment(**kwargs: Any) -> Any:
    import verifiers.legacy as vf

    parser = vf.XMLParser(["think", "answer"])

    def last_line_is_answer(completion: Any, answer: str, **_: Any) -> float:
        lines = [x.strip() for x in (parser.parse_answer(completion) or "").splitlines()]
        lines = [x for x in lines if x]
        return 1.0 if lines and lines[-1] == answer else 0.0

    rubric = vf.Rubric(funcs=[last_line_is_answer], parser=parser)
    train, held = datasets()
    return vf.SingleTurnEnv(
        dataset=train, eval_dataset=held, parser=parser, rubric=rubric, **kwargs
    )
