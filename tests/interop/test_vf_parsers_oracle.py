"""The Verifiers adapter builds an oracle reply each of Verifiers 0.3.1's parsers reads.

Before, the oracle probe called ``parser.format(answer=...)`` for any ``XMLParser``, which
raises "Missing value for field 'think'" for ``XMLParser(["think", "answer"])`` (Verifiers'
most common parser): a traceback out of ``qa`` and ``run``. A tuple field whose answer is an
alternative (``("code", "answer")``) got a reply in the canonical ``<code>`` tag, which
``parse_answer`` never reads, and a ``ThinkParser`` environment got the bare answer, which
its parser reads as nothing: no oracle for either.
"""

from __future__ import annotations

import asyncio

import pytest
from interop_helpers import needs

pytestmark = needs("verifiers")

ORACLE_CHECKS = ("scripted_baselines", "verifier_redteam", "error_paths")


@pytest.mark.parametrize(
    ("module", "form"),
    [
        ("vf_ex_xml_think", "XMLParser(think, answer)"),
        ("vf_ex_xml_alternatives", "XMLParser(reasoning, code|answer)"),
        ("vf_ex_think_boxed", "ThinkParser"),  # extract_boxed_answer falls back to the text
        ("vf_ex_default_parser", "Parser"),
    ],
)
def test_oracle_in_the_parsers_form(module: str, form: str) -> None:
    from verifiers.legacy.utils.env_utils import load_environment

    from gymforge.core.types import Reply
    from gymforge.registry.resolve import make_env

    env = make_env(f"verifiers:tests.interop.{module}")
    cls = type(env)
    assert cls.oracle_form is not None and cls.oracle_form.label == form  # type: ignore[attr-defined]
    assert not set(ORACLE_CHECKS) & set(env.qa.not_applicable)  # type: ignore[attr-defined]
    # the oracle's reply is what the environment's own parser reads as the row's answer
    vf_env = load_environment(f"tests.interop.{module}")
    task = env.tasks.resolve(env.tasks.sample(1, 5, "train")[0])  # type: ignore[attr-defined]
    (reply,) = env.oracle_plan(task)  # type: ignore[attr-defined]
    assert isinstance(reply, Reply)
    row = env.truth_of(task).row  # type: ignore[attr-defined]
    completion = [{"role": "assistant", "content": reply.text}]
    assert vf_env.parser.parse_answer(completion) == row["answer"]
    # and the environment's own format reward, where it has one, gives it full marks
    format_reward = vf_env.parser.get_format_reward_func()
    assert format_reward(completion=completion) == 1.0

    async def episode() -> tuple[float, bool]:
        await env.reset(task.task_id, 0)
        result = await env.step(reply)  # scored by the rubric in the sandbox
        return result.reward, bool(result.info["success"])

    reward, success = asyncio.run(episode())
    assert success and reward > 0
