"""Attack: fill the simulated user's context window so that it fails instead of the agent.

``support_desk`` can put an LLM in the customer's place (``user_policy``) and ``crm`` in the
requester's. The agent's reply went to the customer's model whole, so one long reply (well
inside the agent's own token budget) overflowed that model's context: the policy raised
``ContextLengthExceeded`` out of ``env.step``, which the runner never turns into a verdict
(the episode is dropped, or the run stops), and the requester's overflow crashed
``ask_requester`` (``internal``). Success would be any such exception or internal error: an
agent about to fail could make its episode vanish instead. The defence: a simulated user
whose context is full hangs up (a requester answers nothing), and the episode is judged as
any other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from gymforge.core.types import Reply, ToolCall
from gymforge.envs.crm import CrmEnv
from gymforge.envs.support_desk import SupportDeskEnv
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.testing.openai_server.server import OpenAITestServer

FLOOD = "Please tell me your email and ZIP code. " + "Thank you for your patience. " * 2500


@pytest.fixture(scope="module")
def small_model() -> Iterator[OpenAITestServer]:
    """An OpenAI-compatible model with a 4096-token context (vLLM's refusal wording)."""
    with OpenAITestServer(max_context=4096) as srv:
        yield srv


def test_a_customer_whose_context_overflows_hangs_up(small_model: OpenAITestServer) -> None:
    async def go() -> Any:
        factory = OpenAIPolicyFactory("gymforge-test", base_url=small_model.base_url)
        env = SupportDeskEnv(user_policy=lambda: factory())
        try:
            await env.reset(SupportDeskEnv.tasks.sample(1, 3, "train")[0], 0)
            assert env.task is not None
            for action in env.oracle_plan(env.task)[:2]:  # get and take the case
                await env.step(action)
            return await env.step(Reply(text=FLOOD)), env.user
        finally:
            await env.close()
            await factory.aclose()

    result, user = asyncio.run(go())
    assert result.terminated and result.info["end_reason"] == "verdict"
    assert result.info["success"] is False and not result.info.get("verifier_error")
    assert user is not None and user.stop_reason == "context_length"


def test_a_requester_whose_context_overflows_answers_nothing(
    small_model: OpenAITestServer,
) -> None:
    base = {"distractors": 1, "page_size": 10, "fault_rate": 0.0, "team": "T-EAST"}
    tid = CrmEnv.tasks.families["crm.update_contact"].variant_id({**base, "ambiguous": 1}, 2)

    async def go() -> list[dict[str, Any]]:
        factory = OpenAIPolicyFactory("gymforge-test", base_url=small_model.base_url)
        env = CrmEnv(user_policy=lambda: factory())
        try:
            await env.reset(tid, 0)
            out = []
            for _ in range(8):  # each question is cut to 2000 characters; they pile up
                ask = ToolCall(
                    name="ask_requester", arguments={"question": "Which? " + FLOOD[:1990]}
                )
                out.append((await env.step(ask)).info["tool_result"])
            return out
        finally:
            await env.close()
            await factory.aclose()

    results = asyncio.run(go())
    assert all(r["ok"] for r in results), [r["error"] for r in results if not r["ok"]]
