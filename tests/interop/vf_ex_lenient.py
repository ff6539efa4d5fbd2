"""A lenient rubric written the way many are: ``XMLParser(["think", "answer"])`` and a reward
for the answer appearing anywhere in the parsed answer (``answer in parsed``). Its oracle
passes; the red team's hedges must be caught."""

from __future__ import annotations

from typing import Any

from tests.interop.vf_examples_data import datasets


def load_environment(**kwargs: Any) -> Any:
    import verifiers.legacy as vf

    parser = vf.XMLParser(["think", "answer"])

    def contains_answer(completion: Any, answer: str, **_: Any) -> float:
        return 1.0 if answer in (parser.parse_answer(completion) or "") else 0.0

    rubric = vf.Rubric(funcs=[contains_answer], parser=parser)
    train, held = datasets()
    return vf.SingleTurnEnv(
        dataset=train, eval_dataset=held, parser=parser, rubric=rubric, **kwargs
    )
