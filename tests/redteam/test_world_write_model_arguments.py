"""Attack: store text past the world's write cap inside a structured tool argument.

A world write refuses (``validation``) an argument a real API would not store: text over
``max_write_text`` characters or an integer outside 64 bits, at any depth of a dict or a
list (``check_storable``). But an argument typed by a pydantic model, such as the research
``answer`` tool's ``citations: list[Citation]``, reaches the check as model instances, and
the check looked only into dicts and lists: a citation's ``quote`` of any length (bounded
only by the model's output) was written to the world's ``answers`` table. So were object
keys, which the check never measured. Success would be such a write applied; the defence
checks a model's fields and every key as it checks a dict's values.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from gymforge.core.errors import ToolError
from gymforge.core.types import ToolCall
from gymforge.envs.research import ResearchEnv
from gymforge.envs.research.tools import Citation
from gymforge.world.writes import MAX_TEXT, check_storable


def _answer_with(quote: str) -> tuple[dict[str, Any], Any, Any]:
    async def go() -> tuple[dict[str, Any], Any, Any]:
        env = ResearchEnv()
        try:
            await env.reset(ResearchEnv.tasks.sample(1, 5, "train")[0], 0)
            assert env.task is not None
            plan = env.oracle_plan(env.task)
            cut = next(i for i, a in enumerate(plan) if getattr(a, "name", "") == "answer")
            call = plan[cut]
            assert isinstance(call, ToolCall)
            for action in plan[:cut]:
                if isinstance(action, ToolCall):
                    await env.step(action)
            args = dict(call.arguments)
            args["citations"] = [{"doc_id": args["citations"][0]["doc_id"], "quote": quote}]
            before = env.state()["world"]
            result = await env.step(ToolCall(name="answer", arguments=args))
            return result.info["tool_result"], before, env.state()["world"]
        finally:
            await env.close()

    return asyncio.run(go())


def test_a_long_quote_in_a_citation_is_a_validation_error() -> None:
    result, before, after = _answer_with("x" * (MAX_TEXT + 1))
    assert not result["ok"]
    assert result["error"]["kind"] == "validation", result["error"]
    assert after == before


@pytest.mark.parametrize(
    "value",
    [
        Citation(doc_id="D1", quote="x" * (MAX_TEXT + 1)),
        [Citation(doc_id="x" * (MAX_TEXT + 1), quote="q")],
        {"k" * (MAX_TEXT + 1): 1},
        {"outer": {"k" * (MAX_TEXT + 1): "v"}},
        {"n": Citation(doc_id="D1", quote="q"), "big": 2**63},
    ],
)
def test_text_and_integers_past_the_caps_are_refused_inside_models_and_keys(value: Any) -> None:
    with pytest.raises(ToolError) as err:
        check_storable("arg", value)
    assert err.value.kind == "validation"


def test_a_citation_within_the_caps_is_stored() -> None:
    check_storable("citations", [Citation(doc_id="D1", quote="a short quote")])
