"""Red team: the ``vllm:`` policy's cheaper reads (the echoed prompt compared as bytes with
the JSON of the ids sent, the tools' JSON encoded once per episode as a :class:`Toolset`)
must keep what the full reads guaranteed.

- The echo check held the turn's prompt to what the server took. Compared with the bytes
  the request carried, it holds only when those bytes are the prompt's JSON: a turn asked
  again after a failed request (the policy has grown its JSON of the ids by the new ids
  once already) carries the new ids twice, and must not be kept as the prompt it records.
- The template's cache was keyed by the tools' JSON at each call. Keyed by the JSON the
  episode's tools had at its first turn, an environment that changes a part of a tool's
  schema during an episode (``Observation.tools`` shares the nested values with the
  environment) leaves a rendering of the changed tools under the key of the original ones,
  and a later episode with the original tools reads it.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from openai_helpers import FAST_RETRY, arun

from gymforge.core.policy import episode_context
from gymforge.core.types import Message, Observation
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout.capture import CapturedTurn
from gymforge.rollout.server import PolicyServerError
from gymforge.rollout.tokenize_endpoint import TokenInUnsupported
from gymforge.rollout.vllm_policy import VLLMPolicyFactory
from gymforge.testing import (
    OpenAITestServer,
    ServedReply,
    ServedToolCall,
    fake_tokenize,
    render_prompt,
    scripted_responder,
)

TOOL = {
    "type": "function",
    "function": {"name": "f", "description": "d", "parameters": {"type": "object"}},
}
CALL = ServedReply(tool_calls=(ServedToolCall("f", {"x": 1}),))
TOOL_RESULT = Observation(
    messages=(Message(role="tool", content='{"ok": true}', tool_call_id="call_1"),)
)


def reset(tool: dict[str, Any]) -> Observation:
    return Observation(
        messages=(Message(role="system", content="Be brief."), Message(role="user", content="Hi")),
        tools=(tool,),
    )


def test_a_turn_asked_again_after_a_failed_request_keeps_only_the_prompt_it_sent() -> None:
    """Turn 2's request fails on every attempt; the caller asks for turn 2 again. The
    answer echoes what that request carried: either the policy refuses it (the echo is not
    the turn's prompt) or the prompt it records is the one the server was sent."""
    with OpenAITestServer(scripted_responder([CALL, "done"])) as srv:
        made = VLLMPolicyFactory("m", base_url=srv.base_url, retry=FAST_RETRY)

        async def go() -> list[int] | None:
            policy = made()
            await policy.start(episode_context(policy, LedgerEnv(), "t/v1/d1/s1", 0))
            try:
                await policy.act(reset(copy.deepcopy(TOOL)))
                srv.inject(*["500"] * FAST_RETRY.max_attempts * 2)  # and the probe's
                with pytest.raises(PolicyServerError):
                    await policy.act(TOOL_RESULT)
                try:
                    turn = await policy.act(TOOL_RESULT)
                except TokenInUnsupported:
                    return None
                assert isinstance(turn, CapturedTurn)
                return turn.prompt_token_ids
            finally:
                await made.aclose()

        kept = arun(go())
        sent = srv.requests[-1]["prompt"]
    if kept is not None:
        assert kept == sent, (
            f"the turn records {len(kept)} prompt ids; the server was sent {len(sent)}"
        )


class LocalRenderer:
    """A local template (as ``--tokenizer`` loads one: it renders the tools it is given at
    each call) with the test server's rendering."""

    async def chat_ids(self, messages: Any, tools: Any, generation: bool) -> list[int]:
        tools = getattr(tools, "tools", tools)  # a Toolset or a list
        return fake_tokenize(render_prompt(messages, tools, generation))

    async def text_ids(self, text: str) -> list[int]:
        return fake_tokenize(text)

    async def text(self, ids: list[int]) -> str:
        return bytes(ids).decode()


def test_tools_changed_during_an_episode_leave_no_rendering_for_the_original_tools() -> None:
    """Episode 1's environment changes its tool's description after the first turn;
    episode 2 offers the original tool. Episode 2's second prompt is the one a factory
    that never saw episode 1 gives."""

    async def episode(made: VLLMPolicyFactory, tool: dict[str, Any], change: bool) -> Any:
        policy = made()
        await policy.start(episode_context(policy, LedgerEnv(), "t/v1/d1/s1", 0))
        await policy.act(reset(tool))
        if change:  # the environment's own schema: the observation shares nested values
            tool["function"]["description"] = "a longer description, changed mid-episode"
        turn = await policy.act(TOOL_RESULT)
        assert isinstance(turn, CapturedTurn)
        return turn.prompt_token_ids

    with OpenAITestServer(scripted_responder([CALL, "done"] * 3)) as srv:

        def factory() -> VLLMPolicyFactory:
            made = VLLMPolicyFactory("m", base_url=srv.base_url, retry=FAST_RETRY)
            made.template.renderer = LocalRenderer()
            return made

        async def go() -> tuple[Any, Any]:
            seen, fresh = factory(), factory()
            try:
                await episode(seen, copy.deepcopy(TOOL), change=True)
                after = await episode(seen, copy.deepcopy(TOOL), change=False)
                return after, await episode(fresh, copy.deepcopy(TOOL), change=False)
            finally:
                await seen.aclose()
                await fresh.aclose()

        after, want = arun(go())
    assert after == want
