"""An environment that offers tools JSON cannot carry (a set, NaN, an object) gets a mistake
naming the value from either server policy, before any request is sent: no request could
send them, in any episode. Before, the policies raised ``TypeError: Object of type set is
not JSON serializable`` (or sent ``NaN`` in ``vllm:``'s tools), which a run retried as a
failing client until its retries ran out."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from openai_helpers import FAST_RETRY, arun

from gymforge.core.errors import UserError
from gymforge.core.policy import episode_context
from gymforge.core.types import Message, Observation
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.rollout.parsing import ToolsNotJson
from gymforge.rollout.server import Sampling
from gymforge.rollout.vllm_policy import VLLMPolicyFactory
from gymforge.testing import OpenAITestServer


def tool(parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": "f", "parameters": parameters}}


@pytest.mark.parametrize("kind", ["openai", "vllm"])
@pytest.mark.parametrize(
    ("parameters", "where"),
    [
        ({"type": "object", "enum": {1, 2}}, "tools[0].function.parameters.enum: set is not JSON"),
        ({"type": "number", "maximum": math.nan}, "tools[0].function.parameters.maximum: nan"),
        ({"type": "object", "default": object()}, "tools[0].function.parameters.default: object"),
    ],
    ids=["set", "nan", "object"],
)
def test_tools_that_are_not_json_are_a_mistake_naming_the_value(
    kind: str, parameters: dict[str, Any], where: str
) -> None:
    reset = Observation(messages=(Message(role="user", content="hi"),), tools=(tool(parameters),))
    with OpenAITestServer() as srv:
        cls = OpenAIPolicyFactory if kind == "openai" else VLLMPolicyFactory
        factory = cls("m", base_url=srv.base_url, retry=FAST_RETRY, sampling=Sampling(max_tokens=8))

        async def go() -> None:
            policy = factory()
            await policy.start(episode_context(policy, LedgerEnv(), "t/v1/d1/s1", 0))
            try:
                await policy.act(reset)
            finally:
                await factory.aclose()

        with pytest.raises(ToolsNotJson, match=re.escape(f"not JSON: {where}")) as err:
            arun(go())
        sent = [r for r in srv.requests if "messages" in r or "prompt" in r]
    assert isinstance(err.value, UserError) and sent == []
