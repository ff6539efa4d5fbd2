"""Verifiers' ``ToolEnv`` pattern: a Python function as a tool (its ``tool_defs``), a
multi-turn loop of tool calls, a correctness reward. The adapter adapts text turns only, so
it refuses this environment in one line."""

from __future__ import annotations

from typing import Any

from tests.interop.vf_examples_data import datasets


def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: The first factor.
        b: The second factor.
    """
    return a * b


def load_environment(**kwargs: Any) -> Any:
    import verifiers.legacy as vf

    parser = vf.Parser()

    def correct_answer(completion: Any, answer: str, **_: Any) -> float:
        return 1.0 if (parser.parse_answer(completion) or "").strip() == answer else 0.0

    train, held = datasets()
    return vf.ToolEnv(
        tools=[multiply],
        dataset=train,
        eval_dataset=held,
        parser=parser,
        rubric=vf.Rubric(funcs=[correct_answer], parser=parser),
        max_turns=4,
        **kwargs,
    )
