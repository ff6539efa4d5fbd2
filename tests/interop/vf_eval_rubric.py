"""A Verifiers environment whose reward function, as its author wrote it, ``eval``s the
completion: "what is 2+3?" is answered with an expression, and the rubric evaluates it and
compares the value with the row's answer. A completion that is code runs wherever the rubric
runs; the red-team tests ``test_vf_rubric_*.py`` use it to show that is never gymforge."""

from __future__ import annotations

from typing import Any

QUESTIONS = [
    (f"What is {a}+{b}? Reply with an arithmetic expression.", str(a + b))
    for a, b in [(2, 3), (4, 5), (6, 7), (1, 8), (9, 9), (3, 4), (5, 5), (2, 8)]
]


def load_environment(**kwargs: Any) -> Any:
    import verifiers.legacy as vf
    from datasets import Dataset

    parser = vf.Parser()

    def expression_value(completion: Any, answer: str, **_: Any) -> float:
        value = eval(parser.parse_answer(completion) or "None")  # the author's choice
        return 1.0 if value == int(answer) else 0.0

    rubric = vf.Rubric(funcs=[expression_value], parser=parser)
    rows = [{"question": q, "answer": a} for q, a in QUESTIONS]
    return vf.SingleTurnEnv(dataset=Dataset.from_list(rows), parser=parser, rubric=rubric, **kwargs)
