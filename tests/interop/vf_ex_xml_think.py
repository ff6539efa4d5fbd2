"""Verifiers' most common single-turn pattern (its GSM8K and math examples):
``XMLParser(["think", "answer"])``, a correctness reward on ``parse_answer`` and the parser's
format reward at weight 0.2, a system prompt asking for the tags."""

from __future__ import annotations

from typing import Any

from tests.interop.vf_examples_data import datasets


def load_environment(**kwargs: Any) -> Any:
    import verifiers.legacy as vf

    parser = vf.XMLParser(["think", "answer"])

    def correct_answer(completion: Any, answer: str, **_: Any) -> float:
        return 1.0 if (parser.parse_answer(completion) or "").strip() == answer else 0.0

    rubric = vf.Rubric(
        funcs=[correct_answer, parser.get_format_reward_func()], weights=[1.0, 0.2], parser=parser
    )
    train, held = datasets()
    return vf.SingleTurnEnv(
        dataset=train,
        eval_dataset=held,
        system_prompt=f"Think step by step, then answer in this format:\n{parser.get_format_str()}",
        parser=parser,
        rubric=rubric,
        **kwargs,
    )
